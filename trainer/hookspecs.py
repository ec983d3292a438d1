"""The trainer's hook: a plugin's reward for a finished session.

The trainer adds this specification to the ``safeagents`` plugin manager (through
``safeagents_addhooks``); plugins implement it with :data:`safeagents.hookimpl`::

    from safeagents import hookimpl

    @hookimpl
    def safeagents_reward(session):
        return None if session.outcome is None else float(not session.hacked)
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import pluggy

from safeagents.plugins import hookspec

if TYPE_CHECKING:
    from safeagents.store import SessionRecord

__all__ = ["add_hookspecs", "safeagents_reward"]


def add_hookspecs(pluginmanager: pluggy.PluginManager) -> None:
    """Add the trainer's hook specifications to ``pluginmanager`` unless it has them."""
    caller: pluggy.HookCaller | None = getattr(pluginmanager.hook, "safeagents_reward", None)
    if caller is None or not caller.has_spec():
        pluginmanager.add_hookspecs(sys.modules[__name__])


@hookspec(firstresult=True)
def safeagents_reward(session: SessionRecord) -> float | None:
    """The training reward of a finished session (the trainer's reward function).

    The first implementation that returns a number decides; ``None`` defers to the next one.
    The trainer's built-in default (registered last) returns ``None`` for a session without
    an outcome, which excludes it from training and from its group's baseline. To exclude a
    session the default would score, wrap the hook (``@hookimpl(wrapper=True)``).
    """
