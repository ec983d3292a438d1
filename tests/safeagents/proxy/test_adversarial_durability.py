"""What must not be lost, or asked twice: timeouts, crashes during a re-ask, streams that
break off, and answers without end."""

from __future__ import annotations

import asyncio
import json
import signal
import sqlite3
import threading
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from proxy_testkit import (
    BLOCKED,
    DIALECTS,
    PATHS,
    RULE,
    FakeUpstream,
    StartProxy,
    chat_tool_answer,
    first_body,
    http,
    serve_process,
    session_json,
)
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse

from safeagents.store import SQLiteStore

MIB = 1024 * 1024


@pytest.fixture
def fake() -> Iterator[FakeUpstream]:
    with FakeUpstream() as server:
        yield server


def _text_answer(text: str = "fine") -> dict[str, Any]:
    message = {"role": "assistant", "content": text}
    return {
        "id": "c2",
        "object": "chat.completion",
        "model": "m",
        "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
    }


def _chat_event(text: str) -> bytes:
    chunk = {"id": "s", "model": "m", "choices": [{"index": 0, "delta": {"content": text}}]}
    return f"data: {json.dumps(chunk)}\n\n".encode()


# --- item 7: a timeout is never a resend


@pytest.mark.parametrize("case", ["non-stream", "stream", "reask"])
def test_a_timeout_never_sends_the_request_twice(
    sid: str, case: str, fake: FakeUpstream, start_proxy: StartProxy
) -> None:
    """A first answer leaves the proxy's upstream connection pooled; the next request times
    out on it. Before, the client sent that POST again on a fresh connection: the upstream
    received it twice and the harness waited twice the timeout."""
    answers = [JSONResponse(chat_tool_answer(BLOCKED) if case == "reask" else _text_answer())]

    async def handler(request: Request) -> Response:
        if answers:
            return answers.pop(0)
        await asyncio.sleep(2)  # still working when the proxy gives up
        return JSONResponse(_text_answer("late"))

    fake.handler = handler
    proxy = start_proxy(fake.url, fresh=True, timeout=0.5)
    url = proxy.session_url(sid) + PATHS["chat"]
    if case != "reask":
        assert http.post(url, json=first_body("chat")).status_code == 200  # pools a connection
    started = time.monotonic()
    response = http.post(url, json=first_body("chat", stream=case == "stream"))
    waited = time.monotonic() - started
    assert response.status_code == 504, response.text
    assert response.json()["error"]["code"] == "upstream_timeout"
    assert len(fake.requests) == 2, [path for _, path, _, _ in fake.requests]
    assert waited < 0.9, f"waited {waited:.2f}s for a 0.5s timeout"


# --- item 9: a finding is durable before the re-ask is sent


def _findings(store: Path, session_id: str) -> list[str]:
    db = sqlite3.connect(f"file:{store}?mode=ro", uri=True)
    try:
        rows = db.execute("SELECT rule_id FROM findings WHERE session_id = ?", (session_id,))
        return [row[0] for row in rows]
    finally:
        db.close()


def test_a_kill_during_a_slow_reask_keeps_the_blocked_attempt(
    sid: str, fake: FakeUpstream, tmp_path: Path
) -> None:
    """Before, everything of the exchange was written when it ended: ``kill -9`` during the
    re-ask left the session ``hacked: false`` with no finding."""
    store = tmp_path / "kill.db"
    release = threading.Event()
    seen_at_reask: list[list[str]] = []

    async def handler(request: Request) -> Response:
        if len(fake.requests) == 1:
            return JSONResponse(chat_tool_answer(BLOCKED))
        seen_at_reask.append(_findings(store, sid))  # what the store holds as the re-ask arrives
        while not release.is_set():
            await asyncio.sleep(0.05)
        return JSONResponse(_text_answer())

    fake.handler = handler
    try:
        with serve_process(fake.url, str(store), tmp_path / "serve.log") as (process, base):
            url = f"{base}/s/{sid}/v1" + PATHS["chat"]
            errors: list[BaseException] = []

            def harness() -> None:
                try:
                    httpx.post(url, json=first_body("chat"), timeout=30)
                except httpx.TransportError as error:
                    errors.append(error)

            client = threading.Thread(target=harness)
            client.start()
            deadline = time.monotonic() + 20
            while not seen_at_reask and time.monotonic() < deadline:
                time.sleep(0.02)
            assert seen_at_reask, "the re-ask never reached the upstream"
            process.send_signal(signal.SIGKILL)
            process.wait(10)
            client.join(30)
            assert errors, "the harness got an answer from a killed proxy"
    finally:
        release.set()
    assert seen_at_reask == [[RULE]], "the finding was not committed before the re-ask"

    async def reopened() -> None:
        reopened = SQLiteStore(store)
        try:
            session = await reopened.get_session(sid)
            turns = await reopened.turns(sid)
        finally:
            await reopened.close()
        assert session is not None and session.hacked is True
        assert session.tool_calls == 1
        assert [finding.rule_id for finding in session.findings] == [RULE]
        assert [(turn.kind, turn.status) for turn in turns] == [("main", "ok")]
        assert turns[0].findings[0].blocked is True

    asyncio.run(reopened())


def test_a_completed_reask_records_each_attempt_once(
    sid: str, fake: FakeUpstream, start_proxy: StartProxy
) -> None:
    """The blocked attempt is written early; the exchange's own record adds only the rest."""
    answers = [chat_tool_answer(BLOCKED), chat_tool_answer(BLOCKED), _text_answer("done")]

    async def handler(request: Request) -> Response:
        return JSONResponse(answers.pop(0))

    fake.handler = handler
    proxy = start_proxy(fake.url, fresh=True)
    url = proxy.session_url(sid) + PATHS["chat"]
    response = http.post(url, json=first_body("chat"))
    assert response.json()["choices"][0]["message"]["content"] == "done"
    session = session_json(proxy.url, sid)
    assert [(t["kind"], t["attempt"], t["status"]) for t in session["turns"]] == [
        ("main", 0, "ok"),
        ("reask", 1, "ok"),
        ("reask", 2, "ok"),
    ]
    assert [t["seq"] for t in session["turns"]] == [1, 2, 3]
    assert session["hacked"] is True and session["tool_calls"] == 2
    assert session["turn_count"] == 3
    assert [f["rule_id"] for f in session["findings"]] == [RULE, RULE]
    assert session["turns"][2]["delivered"]["choices"][0]["message"]["content"] == "done"
    metrics = http.get(proxy.url + "/metrics").text
    assert 'safeagents_findings_total{action="reject",rule_id="test-file-deletion"} 2' in metrics


# --- item 10: a stream that breaks off keeps what the harness received


def _cut_after_first(events: bytes, marker: bytes) -> bytes:
    """The stream up to and including the first event that carries ``marker``."""
    out = b""
    for event in events.split(b"\n\n"):
        out += event + b"\n\n"
        if marker in event:
            return out
    raise AssertionError("marker not in the stream")


@pytest.mark.parametrize("dialect", DIALECTS)
def test_a_stream_broken_mid_way_records_what_was_delivered(
    sid: str, dialect: str, fake: FakeUpstream, start_proxy: StartProxy
) -> None:
    body = first_body(dialect, stream=True)
    grammar = DIALECTS[dialect]
    info = grammar.parse_request(body)
    whole = grammar.stream_events(grammar.text_response(info, "Partial answer"), info)
    head = _cut_after_first(whole, b"Parti")

    async def events() -> AsyncIterator[bytes]:
        yield head
        await asyncio.sleep(0.05)
        raise ConnectionResetError("the model server died")  # uvicorn drops the connection

    async def handler(request: Request) -> Response:
        return StreamingResponse(events(), media_type="text/event-stream")

    fake.handler = handler
    proxy = start_proxy(fake.url, fresh=True)
    response = http.post(proxy.session_url(sid) + PATHS[dialect], json=body)
    assert response.status_code == 200
    text, error = response.text.partition("upstream stream broke")[::2]
    assert "Parti" in text and error, response.text  # the text, then the error event

    turns = session_json(proxy.url, sid)["turns"]
    assert [(t["status"], t["response"]) for t in turns] == [("error", None)]
    assert turns[0]["error"]
    delivered = turns[0]["delivered"]
    assert delivered is not None, "the harness got text the store does not have"
    assert "Parti" in json.dumps(delivered)


def test_a_client_gone_mid_stream_records_what_it_received(
    sid: str, fake: FakeUpstream, start_proxy: StartProxy
) -> None:
    async def events() -> AsyncIterator[bytes]:
        yield _chat_event("tick ")
        while True:
            await asyncio.sleep(0.02)
            yield _chat_event("tock ")

    async def handler(request: Request) -> Response:
        return StreamingResponse(events(), media_type="text/event-stream")

    fake.handler = handler
    proxy = start_proxy(fake.url, fresh=True)
    url = proxy.session_url(sid) + PATHS["chat"]
    with (
        httpx.Client() as client,
        client.stream("POST", url, json=first_body("chat", stream=True)) as response,
    ):
        assert b"tick" in next(response.iter_bytes())
    deadline = time.monotonic() + 5
    turns: list[dict[str, Any]] = []
    while not turns and time.monotonic() < deadline:
        turns = session_json(proxy.url, sid).get("turns") or []
        time.sleep(0.02)
    assert [t["status"] for t in turns] == ["aborted"]
    content = turns[0]["delivered"]["choices"][0]["message"]["content"]
    assert content.startswith("tick ")


# --- item 11: an answer without end


def _peak_rss(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmHWM")


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs /proc")
def test_an_answer_over_the_response_limit_is_cut_off_with_bounded_memory(
    sid: str, fake: FakeUpstream, tmp_path: Path
) -> None:
    """100 MB answers, whole and streamed, from an upstream that never stops: before, the
    proxy read all of it (63 MB -> 660 MB RSS) and stored it (+220 MB per turn)."""
    piece = "x" * MIB
    event = _chat_event("y" * (64 * 1024))

    async def whole() -> AsyncIterator[bytes]:
        yield b'{"id": "c", "object": "chat.completion", "model": "m", "choices": [{"index": 0, '
        yield b'"message": {"role": "assistant", "content": "'
        for _ in range(100):
            yield piece.encode()
        yield b'"}, "finish_reason": "stop"}]}'

    async def streamed() -> AsyncIterator[bytes]:
        for _ in range(1600):  # 100 MB of text deltas
            yield event
        yield b"data: [DONE]\n\n"

    async def handler(request: Request) -> Response:
        if json.loads(await request.body()).get("stream"):
            return StreamingResponse(streamed(), media_type="text/event-stream")
        return StreamingResponse(whole(), media_type="application/json")

    fake.handler = handler
    store = tmp_path / "limit.db"
    with serve_process(fake.url, str(store), tmp_path / "serve.log", "--response-limit", "32") as (
        process,
        base,
    ):
        url = f"{base}/s/{sid}/v1" + PATHS["chat"]
        before = _peak_rss(process.pid)
        refused = http.post(url, json=first_body("chat"))
        assert refused.status_code == 502
        error = refused.json()["error"]
        assert error["code"] == "upstream_too_large"
        assert "exceeds the response limit of 32 MiB" in error["message"]
        whole_peak = _peak_rss(process.pid)

        received, tail = 0, b""
        with http.stream("POST", url, json=first_body("chat", stream=True)) as response:
            assert response.status_code == 200
            for chunk in response.iter_bytes():
                received += len(chunk)
                tail = (tail + chunk)[-4096:]
        assert 30 * MIB < received < 34 * MIB
        last = [line for line in tail.decode().splitlines() if line.startswith("data: ")]
        assert last[-1] == "data: [DONE]"
        assert "exceeds the response limit" in json.loads(last[-2][6:])["error"]["message"]
        peak = _peak_rss(process.pid)
    print(f"peak RSS: {before / MIB:.0f} MB at start, {whole_peak / MIB:.0f} MB after the whole")
    print(f"answer, {peak / MIB:.0f} MB after the stream")
    # measured 57, 90 and 220 MB: the stream's 32 MiB of delivered text is held by the
    # assembler, joined once and then written (SQLite copies it twice); bounded by the limit,
    # whatever the answer's size
    assert whole_peak < 150 * MIB, f"peak RSS {whole_peak / MIB:.0f} MB"
    assert peak < 300 * MIB, f"peak RSS {peak / MIB:.0f} MB"

    db = sqlite3.connect(str(store))
    try:
        rows = db.execute(
            "SELECT stream, status, length(response), length(delivered) FROM turns "
            "WHERE session_id = ? ORDER BY seq",
            (sid,),
        ).fetchall()
    finally:
        db.close()
    assert [(stream, status, size) for stream, status, size, _ in rows] == [
        (0, "error", None),
        (1, "error", None),
    ]
    assert rows[0][3] is None
    assert rows[1][3] < 33 * MIB  # the text the harness received, no more
