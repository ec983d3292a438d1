"""Checking big tool calls without stalling the event loop, under a hard time budget.

A call whose arguments hold at most ``INLINE_LIMIT`` characters is checked inline: that is
nearly every call, and a thread hop would cost more than the check. A bigger call is checked
on a worker thread while the loop serves everyone else. The analysers are pure Python, so the
thread and the loop share the GIL: while such a check runs, the interpreter's switch interval
drops from 5 ms to ``SWITCH_INTERVAL``, or the loop could wake only ~120 times a second, and
other requests wait milliseconds instead of the whole check. (Native code that keeps the GIL,
such as one tree-sitter parse, still holds the loop for as long as it runs.)

A check that has not finished after ``CHECK_BUDGET`` seconds makes its call unanalysable: its
verdict is that of one opaque ``exec``, the marker the analysers leave past their own budgets,
so the rules that act on unanalysable calls decide it. The thread is left to finish on its
own (the analysers' budgets bound it); its late result is dropped. Time spent waiting for a
free thread counts against the budget.

A big call that was delivered comes back in the session's history on the next turn, where
detectors need its effects: :meth:`CallChecks.history_effects` answers from the effects its
check found (kept for the last ``REMEMBERED`` big calls) and never analyses a big call on the
loop. A big call this process did not check (another worker or instance did, a restart) is
first analysed off the loop by :meth:`CallChecks.learn`, under the same budget; past it, it is
an opaque ``exec``.
"""

from __future__ import annotations

import asyncio
import json
import sys
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from safeagents._actions import AnalysisContext, Effect, ToolCall
from safeagents._detector import SessionState
from safeagents._firewall import Firewall
from safeagents.rules import CallVerdict

__all__ = [
    "CHECK_BUDGET",
    "INLINE_LIMIT",
    "CallChecks",
    "argument_size",
    "opaque_effect",
    "unanalysable",
]

INLINE_LIMIT = 2_048
"""Characters of a call's arguments (strings and keys) checked on the event loop. Hostile
shell costs up to ~30 µs a character to analyse (``:;`` or ``a`` + newline repeated: 2 KB
~20-50 ms, 64 KB ~0.7-1 s on the benchmark machine); a thread hop costs ~0.1 ms."""
CHECK_BUDGET = 5.0
"""Seconds a call checked off the loop may take before it counts as unanalysable."""
CHECK_THREADS = 2
"""Threads for checks off the loop; more only share the GIL more thinly."""
OPAQUE_TEXT_LIMIT = 4_096
"""Characters of the arguments kept in the ``command`` of an unanalysable call's effect."""
SWITCH_INTERVAL = 0.0005
"""Seconds between GIL hand-overs while a check runs off the loop (Python's default is 5 ms)."""
REMEMBERED = 64
"""Big calls whose effects are kept for the history of later turns."""

_switching = threading.Lock()
_running = 0
"""Checks running off the loop in this process (of every :class:`CallChecks`)."""
_interval = sys.getswitchinterval()


def argument_size(arguments: Mapping[str, Any] | str, limit: int) -> int:
    """Characters of text in ``arguments`` (strings, keys, scalars), counted to past ``limit``."""
    size = 0
    stack: list[Any] = [arguments]
    while stack and size <= limit:
        value = stack.pop()
        if isinstance(value, str):
            size += len(value)
        elif isinstance(value, Mapping):
            for key, item in value.items():
                size += len(key) if isinstance(key, str) else 8
                stack.append(item)
        elif isinstance(value, (list, tuple)):
            size += 1 + len(value)
            stack.extend(value)
        else:
            size += 8
    return size


def unanalysable(
    firewall: Firewall,
    call: ToolCall,
    *,
    harness: str,
    context: AnalysisContext,
    session: SessionState | None,
) -> CallVerdict:
    """The verdict on ``call`` as one opaque ``exec``: what could not be analysed in time."""
    effect = opaque_effect(call)
    findings = firewall.engine.check_effects(
        (effect,), call=call, harness=harness, context=context, session=session
    )
    return CallVerdict(call=call, harness=harness, effects=(effect,), findings=findings)


def opaque_effect(call: ToolCall) -> Effect:
    """The analysers' marker for a call that was not analysed: an opaque ``exec`` of its text."""
    return Effect(
        "exec", command=_raw_text(call)[:OPAQUE_TEXT_LIMIT], opaque=True, unanalysable="budget"
    )


class CallChecks:
    """``Firewall.check_call`` for the proxy: inline when small, off the loop when big."""

    def __init__(
        self,
        firewall: Firewall,
        *,
        inline_limit: int = INLINE_LIMIT,
        budget: float = CHECK_BUDGET,
        threads: int = CHECK_THREADS,
    ) -> None:
        self.firewall = firewall
        self.inline_limit = inline_limit
        self.budget = budget
        self._threads = threads
        self._pool: ThreadPoolExecutor | None = None
        self._remembered: OrderedDict[tuple[str, str, int], tuple[Effect, ...]] = OrderedDict()

    async def check(
        self,
        call: ToolCall,
        *,
        harness: str,
        context: AnalysisContext,
        session: SessionState,
        said: tuple[Effect, ...] = (),
    ) -> CallVerdict:
        """The verdict on ``call`` (``said``: its turn's text, see ``Firewall.check_call``);
        ``session`` is extended with its effects, as inline."""
        if argument_size(call.arguments, self.inline_limit) <= self.inline_limit:
            return self.firewall.check_call(
                call, harness=harness, context=context, session=session, said=said
            )
        # the thread gets its own copy: a check past its budget must not touch the session
        private = session.fork()
        loop = asyncio.get_running_loop()
        job = loop.run_in_executor(
            self._executor(),
            _handing_over,
            lambda: self.firewall.check_call(
                call, harness=harness, context=context, session=private, said=said
            ),
        )
        try:
            verdict = await asyncio.wait_for(job, self.budget)
            session.record_call(verdict.effects, cwd=context.cwd)
        except TimeoutError:
            verdict = unanalysable(
                self.firewall, call, harness=harness, context=context, session=session
            )
        self._remember(call, verdict.effects)
        return verdict

    async def learn(
        self, calls: Sequence[ToolCall], *, harness: str, context: AnalysisContext
    ) -> None:
        """Analyse the big ``calls`` of a conversation's history that this process does not
        remember, off the loop and together under one budget, so that
        :meth:`history_effects` has their effects (past the budget: opaque ``exec``)."""
        unknown = {
            _key(call): call
            for call in calls
            if argument_size(call.arguments, self.inline_limit) > self.inline_limit
            and _key(call) not in self._remembered
        }
        if not unknown:
            return
        effects = self.firewall.registry.effects
        loop = asyncio.get_running_loop()
        jobs = {
            key: loop.run_in_executor(
                self._executor(), _handing_over, lambda call=call: effects(call, harness, context)
            )
            for key, call in unknown.items()
        }
        await asyncio.wait(jobs.values(), timeout=self.budget)
        for key, job in jobs.items():
            if job.done() and job.exception() is None:
                self._remember(unknown[key], tuple(job.result()))
            else:  # past the budget (the thread finishes on its own) or failed
                job.cancel()
                self._remember(unknown[key], (opaque_effect(unknown[key]),))

    def history_effects(
        self, call: ToolCall, harness: str, context: AnalysisContext
    ) -> list[Effect]:
        """Effects of ``call`` from a conversation's history, for detectors (see above)."""
        if argument_size(call.arguments, self.inline_limit) <= self.inline_limit:
            return self.firewall.registry.effects(call, harness, context)
        found = self._remembered.get(_key(call))
        return list(found) if found is not None else [opaque_effect(call)]

    def _remember(self, call: ToolCall, effects: tuple[Effect, ...]) -> None:
        self._remembered[_key(call)] = effects
        self._remembered.move_to_end(_key(call))
        while len(self._remembered) > REMEMBERED:
            self._remembered.popitem(last=False)

    def _executor(self) -> ThreadPoolExecutor:
        if self._pool is None:
            self._pool = ThreadPoolExecutor(self._threads, thread_name_prefix="safeagents-check")
        return self._pool

    def close(self) -> None:
        """Stop the threads once their checks end (they are not waited for)."""
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None


_T = TypeVar("_T")


def _handing_over(check: Callable[[], _T]) -> _T:
    """Run ``check`` (on a pool thread) with the short switch interval."""
    global _running, _interval
    with _switching:
        if _running == 0:
            _interval = sys.getswitchinterval()
            sys.setswitchinterval(SWITCH_INTERVAL)
        _running += 1
    try:
        return check()
    finally:
        with _switching:
            _running -= 1
            if _running == 0:
                sys.setswitchinterval(_interval)


def _key(call: ToolCall) -> tuple[str, str, int]:
    """Names a call across turns cheaply (the client sends the history, so a forged match
    only misleads detectors about its own session)."""
    return (call.id, call.name, argument_size(call.arguments, 1 << 62))


def _raw_text(call: ToolCall) -> str:
    if isinstance(call.arguments, str):
        return call.arguments
    try:
        return json.dumps(call.arguments, ensure_ascii=False, default=str)[:OPAQUE_TEXT_LIMIT]
    except (ValueError, RecursionError):
        return call.name
