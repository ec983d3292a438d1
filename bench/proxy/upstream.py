"""A fast scripted OpenAI-compatible upstream on raw asyncio (HTTP/1.1, keep-alive).

Every answer is serialised once at start; a request costs a header scan, three byte searches
and one socket write. The model name picks the scenario (see :mod:`bench.proxy.payloads`);
``"stream": true`` gets SSE. A ``-block`` request that already carries a tool result (the proxy's
re-ask) gets a benign call instead of the blocked one.

    .venv/bin/python -m bench.proxy.upstream --port 9100 [--chunks 32] [--paced-delay-ms 1]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import socket
import sys
from dataclasses import dataclass
from typing import Any, cast

from bench.proxy.payloads import ANSWER_TEXT, Scenario

__all__ = ["Answer", "UpstreamOptions", "build_answers", "serve_upstream"]

_MODEL = re.compile(rb'"model"\s*:\s*"([^"]*)"')
_STREAM = re.compile(rb'"stream"\s*:\s*true')
_TOOL_RESULT = re.compile(rb'"role"\s*:\s*"tool"')
_CONTENT_LENGTH = re.compile(rb"\r\ncontent-length\s*:\s*(\d+)", re.IGNORECASE)
_MAX_HEAD = 64 * 1024


@dataclass(frozen=True, slots=True)
class UpstreamOptions:
    chunks: int = 32
    """SSE events carrying the text and the call's arguments."""
    first_token_delay: float = 0.0
    chunk_delay: float = 0.0
    """Seconds before the first event and between events, for ``-paced`` models."""


@dataclass(frozen=True, slots=True)
class Answer:
    """A whole HTTP response, or its head and SSE events for a paced stream."""

    whole: bytes
    head: bytes
    events: tuple[bytes, ...]


def _pieces(text: str, count: int) -> list[str]:
    count = max(1, min(count, len(text)))
    step = -(-len(text) // count)
    return [text[i : i + step] for i in range(0, len(text), step)]


def _completion(scenario: Scenario, reasked: bool) -> dict[str, Any]:
    arguments = json.dumps({"command": scenario.command(reasked=reasked)})
    call = {
        "id": Scenario.call_id(reasked=reasked),
        "type": "function",
        "function": {"name": "bash", "arguments": arguments},
    }
    message = {"role": "assistant", "content": ANSWER_TEXT, "tool_calls": [call]}
    return {
        "id": "chatcmpl-bench",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": scenario.model,
        "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls"}],
        "usage": {"prompt_tokens": 900, "completion_tokens": 40, "total_tokens": 940},
    }


def _events(scenario: Scenario, reasked: bool, chunks: int) -> list[bytes]:
    arguments = json.dumps({"command": scenario.command(reasked=reasked)})
    text_parts = _pieces(ANSWER_TEXT, max(1, chunks // 4))
    argument_parts = _pieces(arguments, max(1, chunks - len(text_parts)))

    def event(delta: dict[str, Any], finish: str | None = None) -> bytes:
        chunk = {
            "id": "chatcmpl-bench",
            "object": "chat.completion.chunk",
            "created": 1_700_000_000,
            "model": scenario.model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }
        return b"data: " + json.dumps(chunk, separators=(",", ":")).encode() + b"\n\n"

    events = [event({"role": "assistant", "content": ""})]
    events += [event({"content": part}) for part in text_parts]
    head = {"index": 0, "id": Scenario.call_id(reasked=reasked), "type": "function"}
    events.append(event({"tool_calls": [{**head, "function": {"name": "bash", "arguments": ""}}]}))
    events += [
        event({"tool_calls": [{"index": 0, "function": {"arguments": part}}]})
        for part in argument_parts
    ]
    events.append(event({}, "tool_calls"))
    events.append(b"data: [DONE]\n\n")
    return events


def _chunked(data: bytes) -> bytes:
    return b"%x\r\n%s\r\n" % (len(data), data)


def _answer(scenario: Scenario, stream: bool, reasked: bool, options: UpstreamOptions) -> Answer:
    if not stream:
        body = json.dumps(_completion(scenario, reasked), separators=(",", ":")).encode()
        head = (
            b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
            b"content-length: %d\r\n\r\n" % len(body)
        )
        return Answer(head + body, head, ())
    head = (
        b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\n"
        b"transfer-encoding: chunked\r\n\r\n"
    )
    events = (*tuple(_chunked(e) for e in _events(scenario, reasked, options.chunks)), b"0\r\n\r\n")
    return Answer(head + b"".join(events), head, events)


def build_answers(options: UpstreamOptions) -> dict[tuple[str, bool, bool], Answer]:
    """Every answer, keyed by (model, stream, re-asked)."""
    answers: dict[tuple[str, bool, bool], Answer] = {}
    for size in ("100", "10k"):
        for blocked in (False, True):
            for paced in (False, True):
                scenario = Scenario(size, blocked, paced)
                for stream in (False, True):
                    for reasked in (False, True):
                        key = (scenario.model, stream, reasked)
                        answers[key] = _answer(scenario, stream, reasked, options)
    return answers


_MODELS_BODY = json.dumps(
    {"object": "list", "data": [{"id": "bench-100", "object": "model", "owned_by": "bench"}]}
).encode()
_MODELS = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n%s" % (
    len(_MODELS_BODY),
    _MODELS_BODY,
)
_NOT_FOUND = b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n"
_BAD = b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"


class _Connection(asyncio.Protocol):
    def __init__(self, answers: dict[tuple[str, bool, bool], Answer], options: UpstreamOptions):
        self.answers = answers
        self.options = options
        self.buffer = bytearray()
        self.transport: asyncio.Transport | None = None
        self.pending: asyncio.Task[None] | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)  # uvloop's is no subclass
        sock = transport.get_extra_info("socket")
        if sock is not None:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def connection_lost(self, exc: Exception | None) -> None:
        if self.pending is not None:
            self.pending.cancel()

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        while self.pending is None:
            end = self.buffer.find(b"\r\n\r\n")
            if end < 0:
                if len(self.buffer) > _MAX_HEAD:
                    self._fail()
                return
            head = bytes(self.buffer[:end])
            match = _CONTENT_LENGTH.search(head)
            length = int(match.group(1)) if match else 0
            if len(self.buffer) < end + 4 + length:
                return
            body = bytes(self.buffer[end + 4 : end + 4 + length])
            del self.buffer[: end + 4 + length]
            self._respond(head, body)

    def _fail(self) -> None:
        assert self.transport is not None
        self.transport.write(_BAD)
        self.transport.close()

    def _respond(self, head: bytes, body: bytes) -> None:
        assert self.transport is not None
        line = head.split(b"\r\n", 1)[0]
        if line.startswith(b"GET ") and b"/models" in line:
            self.transport.write(_MODELS)
            return
        if not line.startswith(b"POST ") or b"/chat/completions" not in line:
            self.transport.write(_NOT_FOUND)
            return
        model = _MODEL.search(body)
        scenario = Scenario.from_model(model.group(1).decode() if model else "bench-100")
        stream = _STREAM.search(body) is not None
        reasked = scenario.blocked and _TOOL_RESULT.search(body) is not None
        answer = self.answers[(scenario.model, stream, reasked)]
        paced = scenario.paced and stream
        if not paced or not (self.options.first_token_delay or self.options.chunk_delay):
            self.transport.write(answer.whole)
            return
        self.pending = asyncio.get_running_loop().create_task(self._pace(answer))

    async def _pace(self, answer: Answer) -> None:
        assert self.transport is not None
        self.transport.write(answer.head)
        await asyncio.sleep(self.options.first_token_delay)
        for index, event in enumerate(answer.events):
            if index and self.options.chunk_delay:
                await asyncio.sleep(self.options.chunk_delay)
            self.transport.write(event)
        self.pending = None
        if self.buffer:
            self.data_received(b"")


async def serve_upstream(host: str, port: int, options: UpstreamOptions) -> asyncio.Server:
    answers = build_answers(options)
    loop = asyncio.get_running_loop()
    return await loop.create_server(
        lambda: _Connection(answers, options), host, port, backlog=4096, reuse_address=True
    )


async def _main(args: argparse.Namespace) -> None:
    options = UpstreamOptions(
        chunks=args.chunks,
        first_token_delay=args.first_token_delay_ms / 1000,
        chunk_delay=args.chunk_delay_ms / 1000,
    )
    server = await serve_upstream(args.host, args.port, options)
    port = server.sockets[0].getsockname()[1]
    print(f"ready {port}", flush=True)
    async with server:
        await server.serve_forever()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--chunks", type=int, default=32)
    parser.add_argument("--first-token-delay-ms", type=float, default=20.0)
    parser.add_argument("--chunk-delay-ms", type=float, default=1.0)
    args = parser.parse_args(argv)
    try:
        asyncio.run(_main(args))
    except KeyboardInterrupt:
        sys.exit(0)


if __name__ == "__main__":
    main()
