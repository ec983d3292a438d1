"""Issue 11, item 8: one big tool call must not stall the other sessions' requests, and a check
that runs past its budget makes the call unanalysable (a finding), not allowed."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from proxy_testkit import FakeUpstream, StartProxy, chat_tool_answer, first_body, http
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from safeagents import (
    AnalysisContext,
    CallVerdict,
    Effect,
    Firewall,
    RuleSet,
    SessionState,
    ToolCall,
)

BIG_COMMAND = "echo x; " * 25_000  # 200 KB: checked off the event loop
SMALL_COMMAND = "ls -la"
UNANALYSABLE_RULE = """\
id: test-unanalysable
category: other
severity: high
action: reject
description: Calls that could not be analysed in time.
match:
  all:
    - effect: exec
    - opaque: true
message: "unanalysable: {summary}"
"""


class SlowFirewall(Firewall):
    """Checks a big call slowly, in pure Python (holding the GIL as the analysers do)."""

    seconds = 1.5

    def check_call(
        self,
        call: ToolCall,
        *,
        harness: str,
        context: AnalysisContext | None = None,
        session: SessionState | None = None,
        said: Sequence[Effect] = (),
    ) -> CallVerdict:
        if len(str(call.argument("command") or "")) > 100_000:
            deadline = time.perf_counter() + self.seconds
            while time.perf_counter() < deadline:
                pass
        return super().check_call(
            call, harness=harness, context=context, session=session, said=said
        )


@pytest.fixture(scope="module")
def model() -> Iterator[FakeUpstream]:
    """Answers model ``big`` with a 200 KB shell call and any other with ``ls -la``."""

    async def answer(request: Request) -> Response:
        big = json.loads(await request.body()).get("model") == "big"
        return JSONResponse(chat_tool_answer(BIG_COMMAND if big else SMALL_COMMAND))

    with FakeUpstream() as upstream:
        upstream.handler = answer
        yield upstream


def _post(base: str, session: str, model_name: str) -> dict[str, Any]:
    body = first_body("chat") | {"model": model_name}
    response = http.post(f"{base}/s/{session}/v1/chat/completions", json=body)
    assert response.status_code == 200, response.text
    value: dict[str, Any] = response.json()
    return value


def test_a_big_call_being_checked_does_not_stall_other_sessions(
    model: FakeUpstream, start_proxy: StartProxy, tmp_path: Path
) -> None:
    firewall = SlowFirewall(RuleSet.load())
    proxy = start_proxy(model.url, firewall=firewall, fresh=True)
    _post(proxy.url, "warm", "small")
    big: list[dict[str, Any]] = []
    sender = threading.Thread(target=lambda: big.append(_post(proxy.url, "big", "big")))
    started = time.perf_counter()
    sender.start()
    latencies = []
    while sender.is_alive() and time.perf_counter() - started < 10:
        begin = time.perf_counter()
        _post(proxy.url, f"small-{len(latencies)}", "small")
        latencies.append(time.perf_counter() - begin)
        time.sleep(0.01)
    sender.join(10)
    assert big and big[0]["choices"][0]["message"]["tool_calls"]  # checked, then delivered
    assert time.perf_counter() - started >= SlowFirewall.seconds
    assert len(latencies) >= 5, latencies
    assert max(latencies) < 0.5, f"small requests stalled: {max(latencies):.3f} s"


def test_a_check_past_its_budget_is_an_unanalysable_finding(
    model: FakeUpstream, start_proxy: StartProxy, tmp_path: Path
) -> None:
    rule = tmp_path / "test-unanalysable.yaml"
    rule.write_text(UNANALYSABLE_RULE)
    firewall = SlowFirewall(RuleSet.load([rule]))
    firewall.seconds = 3.0
    proxy = start_proxy(model.url, firewall=firewall, fresh=True, max_reasks=0)
    proxy.app.state.services.enforcer.checks.budget = 0.3
    started = time.perf_counter()
    answer = _post(proxy.url, "over-budget", "big")
    elapsed = time.perf_counter() - started
    message = answer["choices"][0]["message"]
    assert not message.get("tool_calls"), "an unanalysable call was delivered"
    assert "unanalysable" in message["content"]
    assert elapsed < 2.0, f"the budget was not enforced: {elapsed:.2f} s"
    small = _post(proxy.url, "under-budget", "small")
    assert small["choices"][0]["message"]["tool_calls"]
