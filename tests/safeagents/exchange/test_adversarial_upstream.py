"""An upstream that stalls, or answers without end: never asked twice, never read past the limit."""

from __future__ import annotations

import asyncio
import json
import time
import zlib
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

import pytest

from safeagents.exchange import (
    Client,
    ProxyConfig,
    Upstream,
    UpstreamError,
    UpstreamTimeout,
)

ANSWER = b'{"ok": true}'


async def _read_request(reader: asyncio.StreamReader) -> bytes:
    head = await reader.readuntil(b"\r\n\r\n")
    length = 0
    for line in head.lower().split(b"\r\n"):
        if line.startswith(b"content-length:"):
            length = int(line.split(b":")[1])
    return await reader.readexactly(length)


def _reply(body: bytes, *extra: str) -> bytes:
    headers = "".join(f"{line}\r\n" for line in extra)
    return f"HTTP/1.1 200 OK\r\ncontent-length: {len(body)}\r\n{headers}\r\n".encode() + body


class Counting:
    """A raw-socket upstream that counts the requests it receives."""

    def __init__(self, handler: Callable[[int, asyncio.StreamWriter], Awaitable[bool]]) -> None:
        self.handler = handler
        """``handler(n, writer)`` answers request ``n`` (from 1); False closes the connection."""
        self.requests = 0
        self.connections = 0
        self.server: asyncio.Server | None = None

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            while True:
                await _read_request(reader)
                self.requests += 1
                if not await self.handler(self.requests, writer):
                    break
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    async def __aenter__(self) -> str:
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        port = self.server.sockets[0].getsockname()[1]
        return f"http://127.0.0.1:{port}"

    async def __aexit__(self, *exc: object) -> None:
        assert self.server is not None
        self.server.close()
        await self.server.wait_closed()


def _run(test: Callable[[], Coroutine[Any, Any, None]]) -> None:
    asyncio.run(test())


async def _answer(writer: asyncio.StreamWriter) -> bool:
    writer.write(_reply(ANSWER))
    await writer.drain()
    return True


def test_a_timeout_on_a_reused_connection_is_not_sent_again() -> None:
    """The first request leaves a kept-alive connection in the pool; the second times out on
    it. Before the fix the client sent it once more on a fresh connection (the upstream
    received the POST twice) and the caller waited twice the timeout."""

    async def handler(n: int, writer: asyncio.StreamWriter) -> bool:
        if n == 1:
            return await _answer(writer)
        await asyncio.sleep(1.5)  # working on it, past the proxy's timeout
        return False

    async def test() -> None:
        upstream = Counting(handler)
        async with upstream as url:
            client = Client(timeout=0.4, connect_timeout=1)
            try:
                first = await client.send("POST", url, {}, b"{}")
                assert await first.aread() == ANSWER
                started = time.monotonic()
                with pytest.raises(UpstreamTimeout):
                    await client.send("POST", url, {}, b"{}")
                waited = time.monotonic() - started
            finally:
                await client.aclose()
        assert upstream.requests == 2, "the timed-out request was sent again"
        assert waited < 0.75, f"waited {waited:.2f}s for a 0.4s timeout"

    _run(test)


def test_a_reused_connection_closed_before_any_answer_byte_is_retried_once() -> None:
    """The retry the client is for: the upstream dropped the pooled connection."""

    async def handler(n: int, writer: asyncio.StreamWriter) -> bool:
        if n == 2:
            return False  # closed without a byte, as an idle-timeout close racing the request
        return await _answer(writer)

    async def test() -> None:
        upstream = Counting(handler)
        async with upstream as url:
            client = Client(timeout=2, connect_timeout=1)
            try:
                for _ in range(2):
                    response = await client.send("POST", url, {}, b"{}")
                    assert await response.aread() == ANSWER
            finally:
                await client.aclose()
        assert (upstream.requests, upstream.connections) == (3, 2)

    _run(test)


def test_a_timeout_on_a_reask_through_upstream_is_one_request() -> None:
    """Upstream.complete (the re-ask path) maps the single timeout to a 504."""

    async def handler(n: int, writer: asyncio.StreamWriter) -> bool:
        if n == 1:
            return await _answer(writer)
        await asyncio.sleep(1.5)
        return False

    async def test() -> None:
        counting = Counting(handler)
        async with counting as url:
            upstream = Upstream(ProxyConfig(upstream=url, timeout=0.4))
            try:
                await upstream.complete(url + "/v1/chat/completions", {}, {"model": "m"})
                with pytest.raises(UpstreamError) as caught:
                    await upstream.complete(url + "/v1/chat/completions", {}, {"model": "m"})
            finally:
                await upstream.aclose()
        assert (caught.value.status, caught.value.kind) == (504, "upstream_timeout")
        assert counting.requests == 2

    _run(test)


def _huge(size: int) -> bytes:
    text = "x" * size
    return json.dumps({"choices": [{"message": {"content": text}}]}).encode()


@pytest.mark.parametrize("encoding", ["identity", "gzip"])
def test_an_answer_over_the_response_limit_is_a_502(encoding: str) -> None:
    body = _huge(4 * 1024 * 1024)
    if encoding == "gzip":
        packer = zlib.compressobj(wbits=zlib.MAX_WBITS | 16)
        body = packer.compress(body) + packer.flush()  # a few KB that inflate to 4 MB

    async def handler(n: int, writer: asyncio.StreamWriter) -> bool:
        writer.write(_reply(body, f"content-encoding: {encoding}"))
        await writer.drain()
        return True

    async def test() -> None:
        counting = Counting(handler)
        async with counting as url:
            upstream = Upstream(ProxyConfig(upstream=url, response_limit=1024 * 1024))
            try:
                with pytest.raises(UpstreamError) as caught:
                    await upstream.complete(url + "/v1/chat/completions", {}, {"model": "m"})
            finally:
                await upstream.aclose()
        assert (caught.value.status, caught.value.kind) == (502, "upstream_too_large")
        assert "exceeds the response limit of 1 MiB" in caught.value.message
        assert "--response-limit" in caught.value.message

    _run(test)


def test_an_answer_of_exactly_the_limit_is_read_whole() -> None:
    body = _huge(16)

    async def handler(n: int, writer: asyncio.StreamWriter) -> bool:
        writer.write(_reply(body))
        await writer.drain()
        return True

    async def test() -> None:
        counting = Counting(handler)
        async with counting as url:
            upstream = Upstream(ProxyConfig(upstream=url, response_limit=len(body)))
            try:
                content = await upstream.read(await upstream.open("GET", url, {}, None))
            finally:
                await upstream.aclose()
        assert content == body

    _run(test)


def test_a_gzip_bomb_is_inflated_in_bounded_steps() -> None:
    """A chunk of a few KB that inflates to 64 MB never comes out in one piece."""
    packer = zlib.compressobj(wbits=zlib.MAX_WBITS | 16)
    bomb = packer.compress(b"\0" * (64 * 1024 * 1024)) + packer.flush()

    async def handler(n: int, writer: asyncio.StreamWriter) -> bool:
        writer.write(_reply(bomb, "content-encoding: gzip"))
        await writer.drain()
        return True

    async def test() -> None:
        counting = Counting(handler)
        async with counting as url:
            client = Client(timeout=5, connect_timeout=1)
            try:
                response = await client.send("GET", url, {}, None)
                largest, total = 0, 0
                async for piece in response.aiter_bytes():
                    largest, total = max(largest, len(piece)), total + len(piece)
            finally:
                await client.aclose()
        assert total == 64 * 1024 * 1024
        assert largest <= 1024 * 1024

    _run(test)
