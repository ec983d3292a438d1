"""``python -m safeagents.cli``: the same as the ``safeagents`` command."""

from safeagents.cli import main

raise SystemExit(main())
