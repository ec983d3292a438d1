"""The proxy bridge by itself: what it forwards, what it refuses, and the step count."""

from __future__ import annotations

import asyncio
import gc
import logging
from pathlib import Path
from typing import Any

import pytest

from trainer.sandbox._bridge import ProxyBridge


async def _upstream() -> tuple[asyncio.Server, list[bytes]]:
    seen: list[bytes] = []

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        seen.append(head)
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok")
        await writer.drain()
        writer.close()

    return await asyncio.start_server(answer, "127.0.0.1", 0), seen


async def _ask(path: Path, request: bytes) -> bytes:
    reader, writer = await asyncio.open_unix_connection(str(path))
    writer.write(request)
    await writer.drain()
    answer = await reader.read()
    writer.close()
    return answer


def test_the_bridge_forwards_its_session_only_and_counts_model_requests(tmp_path: Path) -> None:
    async def scenario() -> tuple[list[bytes], list[bytes], ProxyBridge]:
        server, seen = await _upstream()
        port = server.sockets[0].getsockname()[1]
        bridge = ProxyBridge(
            tmp_path / "p.sock", host="127.0.0.1", port=port, session_id="s1", max_requests=1
        )
        async with bridge, server:
            answers = [
                await _ask(bridge.socket_path, request)
                for request in (
                    b"POST /s/s1/v1/chat/completions HTTP/1.1\r\nconnection: keep-alive\r\n"
                    b"content-length: 0\r\n\r\n",
                    b"POST /s/s1/v1/chat/completions HTTP/1.1\r\ncontent-length: 0\r\n\r\n",
                    b"GET /s/s1/v1/models HTTP/1.1\r\n\r\n",
                    b"GET http://127.0.0.1/s/s1/v1/models HTTP/1.1\r\n\r\n",
                    b"GET /s/s1/v1/..%2f..%2fsafeagents HTTP/1.1\r\n\r\n",
                    b"hello\r\n\r\n",
                    b"GET /s/s1/v1/models HTTP/1.1\r\nx: " + b"a" * 70_000 + b"\r\n\r\n",
                )
            ]
        return answers, seen, bridge

    answers, seen, bridge = asyncio.run(scenario())
    statuses = [answer.split(b" ", 2)[1] for answer in answers]
    assert statuses == [b"200", b"429", b"200", b"403", b"403", b"400", b"431"]
    assert bridge.requests == 1 and bridge.limit_reached.is_set()
    assert len(seen) == 2 and all(b"connection: close" in head for head in seen)
    assert b"keep-alive" not in seen[0]
    assert not bridge.socket_path.exists()  # closed with the bridge


def test_closing_with_requests_in_flight_ends_every_connection_quietly(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    async def scenario() -> tuple[list[dict[str, Any]], list[bytes], int]:
        loop = asyncio.get_running_loop()
        errors: list[dict[str, Any]] = []
        loop.set_exception_handler(lambda _, context: errors.append(context))
        heads: list[bytes] = []
        held = asyncio.Event()

        async def hold(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            heads.append(await reader.readuntil(b"\r\n\r\n"))
            if len(heads) == 16:
                held.set()
            await reader.read()  # never answers: the bridge must end the connection
            writer.close()

        upstream = await asyncio.start_server(hold, "127.0.0.1", 0)
        bridge = ProxyBridge(
            tmp_path / "p.sock",
            host="127.0.0.1",
            port=upstream.sockets[0].getsockname()[1],
            session_id="s1",
            max_requests=None,
        )
        await bridge.start()
        asking = [
            asyncio.create_task(
                _ask(
                    bridge.socket_path,
                    b"POST /s/s1/v1/chat/completions HTTP/1.1\r\ncontent-length: 5\r\n\r\n",
                )
            )
            for _ in range(16)
        ]
        await asyncio.wait_for(held.wait(), 10)
        await asyncio.wait_for(bridge.close(), 10)
        answers = await asyncio.wait_for(asyncio.gather(*asking), 10)
        upstream.close()
        await upstream.wait_closed()
        for _ in range(3):
            await asyncio.sleep(0)
        gc.collect()
        return errors, answers, len(bridge._tasks)

    with caplog.at_level(logging.DEBUG, logger="asyncio"):
        errors, answers, left = asyncio.run(scenario())
    assert errors == [] and left == 0
    assert answers == [b""] * 16  # closed without an answer: the request was cut off
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]
