"""The text a Python script puts into a file with ``str.replace``, its names resolved."""

from __future__ import annotations

from detector_testkit import build_context

from safeagents._actions import Effect
from safeagents._detector import CallContext
from safeagents.detectors import _script_replacements
from safeagents.detectors._script_replacements import replaced_texts

SCRIPT = (
    "from pathlib import Path\np = Path('pkg/fmt.py')\ns = p.read_text()\n"
    "old = 'def f(n):\\n'\nnew = 'def f(n):\\n    if n == 7:\\n        return 1\\n'\n"
    "p.write_text(s.replace(old, new))\n"
)


def _context(*effects: Effect) -> CallContext:
    context = build_context()
    return CallContext(
        context.call,
        context.harness,
        context.analysis,
        context.session,
        effects=effects,
        is_test_path=context.is_test_path,
    )


def test_exports() -> None:
    assert _script_replacements.__all__ == ["replaced_texts"]


def test_the_new_text_of_a_replace_inside_the_write() -> None:
    context = _context(Effect("exec", argv0="python3", command=SCRIPT))
    assert replaced_texts("/workspace/pkg/fmt.py", context) == [
        "def f(n):\n    if n == 7:\n        return 1\n"
    ]


def test_scripts_of_other_files_or_programs_give_nothing() -> None:
    assert (
        replaced_texts(
            "/workspace/pkg/other.py", _context(Effect("exec", argv0="python3", command=SCRIPT))
        )
        == []
    )
    assert (
        replaced_texts(
            "/workspace/pkg/fmt.py", _context(Effect("exec", argv0="node", command=SCRIPT))
        )
        == []
    )
    unresolved = SCRIPT.replace("new = 'def", "new = input() + 'def")
    assert (
        replaced_texts(
            "/workspace/pkg/fmt.py", _context(Effect("exec", argv0="python3", command=unresolved))
        )
        == []
    )
