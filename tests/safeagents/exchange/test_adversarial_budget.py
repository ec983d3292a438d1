"""Issue 11, item 8, in units: which calls are checked inline, which off the loop, and what a
check past its budget yields."""

from __future__ import annotations

import asyncio
import sys
import threading
import time
from collections.abc import Sequence

import pytest

from safeagents import AnalysisContext, CallVerdict, Effect, Firewall, SessionState, ToolCall
from safeagents.exchange._offload import SWITCH_INTERVAL, CallChecks, argument_size

BIG = ToolCall("c1", "bash", {"command": "echo x; " * 10_000})
SMALL = ToolCall("c2", "bash", {"command": "rm tests/test_a.py"})


class RecordingFirewall(Firewall):
    """The bundled firewall, recording the thread of each check; big calls take ``seconds``."""

    def __init__(self, seconds: float = 0.0) -> None:
        super().__init__(Firewall.load().rules, None)
        self.seconds = seconds
        self.threads: list[int] = []
        self.intervals: list[float] = []
        self.finished = threading.Event()

    def check_call(
        self,
        call: ToolCall,
        *,
        harness: str,
        context: AnalysisContext | None = None,
        session: SessionState | None = None,
        said: Sequence[Effect] = (),
    ) -> CallVerdict:
        self.threads.append(threading.get_ident())
        self.intervals.append(sys.getswitchinterval())
        if call is BIG:
            time.sleep(self.seconds)
        verdict = super().check_call(
            call, harness=harness, context=context, session=session, said=said
        )
        self.finished.set()
        return verdict


def _check(checks: CallChecks, call: ToolCall, session: SessionState) -> CallVerdict:
    async def run() -> CallVerdict:
        return await checks.check(call, harness="pi", context=AnalysisContext(), session=session)

    return asyncio.run(run())


def test_small_calls_are_checked_inline_and_big_ones_off_the_loop() -> None:
    firewall = RecordingFirewall()
    checks = CallChecks(firewall, inline_limit=4096)
    session = SessionState()
    interval = sys.getswitchinterval()
    small = _check(checks, SMALL, session)
    big = _check(checks, BIG, session)
    checks.close()
    assert firewall.threads[0] == threading.get_ident()
    assert firewall.threads[1] != threading.get_ident()
    # the loop gets the GIL back often while a check runs off it, and only then
    assert firewall.intervals == [interval, SWITCH_INTERVAL]
    assert sys.getswitchinterval() == interval
    assert small.blocked and not big.blocked
    assert session.effects == [*small.effects, *big.effects]


def test_a_check_past_its_budget_makes_the_call_an_opaque_exec() -> None:
    firewall = RecordingFirewall(seconds=1.0)
    checks = CallChecks(firewall, inline_limit=4096, budget=0.1)
    session = SessionState()
    started = time.perf_counter()
    verdict = _check(checks, BIG, session)
    assert time.perf_counter() - started < 0.8
    (effect,) = verdict.effects
    assert effect == Effect("exec", command=effect.command, opaque=True, unanalysable="budget")
    assert effect.command and effect.command.startswith('{"command": "echo x; ')
    assert firewall.finished.wait(5)  # the late check ends on its own ...
    checks.close()
    assert session.effects == [effect]  # ... and leaves the session alone


def test_history_never_analyses_a_big_call_on_the_loop() -> None:
    firewall = RecordingFirewall()
    checks = CallChecks(firewall, inline_limit=4096)
    context = AnalysisContext()
    verdict = _check(checks, BIG, SessionState())
    checks.close()
    again = ToolCall(BIG.id, BIG.name, dict(BIG.arguments))  # as the next turn carries it
    assert checks.history_effects(again, "pi", context) == list(verdict.effects)
    stranger = ToolCall("other", "bash", {"command": "rm x; " * 10_000})
    (opaque,) = checks.history_effects(stranger, "pi", context)
    assert opaque.opaque and opaque.kind == "exec"
    assert checks.history_effects(SMALL, "pi", context) == firewall.registry.effects(
        SMALL, "pi", context
    )
    assert len(firewall.threads) == 1


def test_a_big_history_call_another_instance_checked_is_learned_off_the_loop(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The next turn of a session may reach a process that never checked its big call: it
    analyses it on a worker thread before the history needs it, instead of an opaque exec."""
    firewall = Firewall.load()
    checks = CallChecks(firewall, inline_limit=4096)
    context = AnalysisContext()
    wide = ToolCall("w1", "bash", {"command": "echo x; " * 1_000 + "rm tests/test_a.py"})
    threads: list[int] = []
    effects = firewall.registry.effects

    def recording(call: ToolCall, harness: str, ctx: AnalysisContext) -> list[Effect]:
        threads.append(threading.get_ident())
        return effects(call, harness, ctx)

    monkeypatch.setattr(firewall.registry, "effects", recording)
    (opaque,) = checks.history_effects(wide, "pi", context)
    assert opaque.opaque and not threads
    asyncio.run(checks.learn([SMALL, wide], harness="pi", context=context))
    assert len(threads) == 1 and threads[0] != threading.get_ident()  # the big one, off the loop
    learned = checks.history_effects(wide, "pi", context)
    assert learned == effects(wide, "pi", context)
    assert any(e.kind == "delete" and e.path == "/workspace/tests/test_a.py" for e in learned)
    asyncio.run(checks.learn([wide], harness="pi", context=context))
    assert len(threads) == 1  # remembered: not analysed again

    slow = CallChecks(firewall, inline_limit=4096, budget=0.05)
    monkeypatch.setattr(firewall.registry, "effects", lambda *_: time.sleep(1) or [])
    started = time.perf_counter()
    asyncio.run(slow.learn([wide], harness="pi", context=context))
    assert time.perf_counter() - started < 0.8
    (late,) = slow.history_effects(wide, "pi", context)  # past the budget: opaque
    assert late.opaque and late.unanalysable == "budget"
    checks.close()
    slow.close()


@pytest.mark.parametrize(
    "arguments",
    [
        "x" * 100,
        {"command": "x" * 100},
        {"a": [{"b": "x" * 50}] * 2},
    ],
)
def test_argument_size_counts_text(arguments: object) -> None:
    assert 100 <= argument_size(arguments, 10_000) < 200  # type: ignore[arg-type]


def test_argument_size_stops_past_the_limit_and_survives_deep_nesting() -> None:
    deep: object = "x"
    for _ in range(100_000):
        deep = [deep]
    assert argument_size({"a": deep}, 1_000) > 1_000
    assert argument_size({"k": "x" * 10_000_000}, 1_000) > 1_000
