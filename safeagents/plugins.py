"""Hook specifications: the one place that says how to extend safeagents.

Sinks (the trainer, exporters) implement ``turn_recorded`` and ``session_closed``; the proxy
calls them in a worker thread after the store has the data, so a slow sink never delays a
harness.

Built-in harness plugins and detectors register through these same hooks, from the
entry-point group ``safeagents``, exactly like third-party plugins. A plugin module
exposes functions decorated with :data:`hookimpl`::

    from safeagents.plugins import hookimpl

    @hookimpl
    def safeagents_harnesses():
        return [MyHarness()]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import pluggy

if TYPE_CHECKING:
    from safeagents._detector import Detector
    from safeagents._harness import Harness
    from safeagents.store import SessionRecord, TurnRecord

__all__ = ["PROJECT_NAME", "hookimpl", "hookspec"]

PROJECT_NAME = "safeagents"
hookspec = pluggy.HookspecMarker(PROJECT_NAME)
hookimpl = pluggy.HookimplMarker(PROJECT_NAME)


@hookspec
def safeagents_harnesses() -> Sequence[Harness]:  # type: ignore[empty-body]
    """Harness plugins this module provides (tool map, detection, launch recipe)."""


@hookspec
def safeagents_detectors() -> Sequence[Detector]:  # type: ignore[empty-body]
    """Named Python detectors that rules can use as ``detector: NAME``."""


@hookspec
def turn_recorded(turn: TurnRecord) -> None:
    """A turn (one upstream exchange: the harness's request or a re-ask) is in the store.

    ``turn.request`` is the request as the upstream saw it (hidden history spliced in),
    ``turn.response`` its answer, ``turn.delivered`` what the harness received, and
    ``turn.tokens`` the engine's token ids and logprobs when ``--capture-tokens`` is on.
    """


@hookspec
def session_closed(session: SessionRecord) -> None:
    """A session got its outcome from the verifier (``POST …/sessions/{id}/outcome``), so its
    score is complete: ``session.hacked``, ``session.findings`` and ``session.outcome``."""


@hookspec(firstresult=True)
def safeagents_reward(session: SessionRecord) -> float | None:
    """The training reward of a finished session (the trainer's reward function).

    The first implementation that returns a number decides; ``None`` defers to the next one.
    The trainer's built-in default (registered last) returns ``None`` for a session without
    an outcome, which excludes it from training and from its group's baseline. To exclude a
    session the default would score, wrap the hook (``@hookimpl(wrapper=True)``).
    """
