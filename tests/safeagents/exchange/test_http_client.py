"""The exchange's own HTTP/1.1 client against scripted raw-socket servers."""

from __future__ import annotations

import asyncio
import gzip
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine
from typing import Any

import pytest

from safeagents.exchange._http import Client, HTTPError, UpstreamTimeout

Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


async def _read_request(reader: asyncio.StreamReader) -> tuple[bytes, bytes]:
    head = await reader.readuntil(b"\r\n\r\n")
    lower = head.lower()
    if b"transfer-encoding: chunked" in lower:
        body = b""
        while True:
            size = int((await reader.readuntil(b"\r\n")).strip(), 16)
            chunk = await reader.readexactly(size + 2)
            if size == 0:
                return head, body
            body += chunk[:-2]
    length = 0
    for line in lower.split(b"\r\n"):
        if line.startswith(b"content-length:"):
            length = int(line.split(b":")[1])
    return head, await reader.readexactly(length)


def _reply(body: bytes, *extra: str, status: str = "200 OK") -> bytes:
    headers = "".join(f"{line}\r\n" for line in extra)
    return f"HTTP/1.1 {status}\r\ncontent-length: {len(body)}\r\n{headers}\r\n".encode() + body


async def _serve(handler: Handler) -> tuple[asyncio.Server, str, list[int]]:
    connections: list[int] = []

    async def counted(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        connections.append(1)
        try:
            await handler(reader, writer)
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(counted, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    return server, f"http://127.0.0.1:{port}", connections


def _run(test: Callable[[], Coroutine[Any, Any, None]]) -> None:
    asyncio.run(test())


def test_keep_alive_reuses_one_connection_and_sends_lengths() -> None:
    seen: list[bytes] = []

    async def echo(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while True:
            head, body = await _read_request(reader)
            seen.append(head)
            writer.write(_reply(b"got " + body))
            await writer.drain()

    async def test() -> None:
        server, url, connections = await _serve(echo)
        client = Client(timeout=5, connect_timeout=5)
        try:
            for index in range(3):
                response = await client.send("POST", url + "/v1/x?a=1", {}, b"n%d" % index)
                assert response.status_code == 200
                assert await response.aread() == b"got n%d" % index
        finally:
            await client.aclose()
            server.close()
            await server.wait_closed()
        assert len(connections) == 1
        assert seen[0].startswith(b"POST /v1/x?a=1 HTTP/1.1\r\n")
        assert b"content-length: 2" in seen[0] and b"host: 127.0.0.1:" in seen[0]

    _run(test)


def test_a_streamed_body_goes_chunked_and_chunked_answers_arrive_whole() -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head, body = await _read_request(reader)
        assert b"transfer-encoding: chunked" in head.lower()
        writer.write(b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n")
        for part in (b"data: one\n\n", body, b"data: [DONE]\n\n"):
            writer.write(b"%x\r\n%s\r\n" % (len(part), part))
            await writer.drain()
        writer.write(b"0\r\n\r\n")
        await writer.drain()
        await reader.read()

    async def parts() -> AsyncIterator[bytes]:
        for piece in (b"data: ", b"two\n\n"):
            yield piece

    async def test() -> None:
        server, url, _ = await _serve(handler)
        client = Client(timeout=5, connect_timeout=5)
        try:
            response = await client.send("POST", url + "/s", {}, parts())
            received = b"".join([chunk async for chunk in response.aiter_bytes()])
            assert received == b"data: one\n\ndata: two\n\ndata: [DONE]\n\n"
        finally:
            await client.aclose()
            server.close()
            await server.wait_closed()

    _run(test)


def test_gzip_answers_are_decoded_but_raw_bytes_stay_raw() -> None:
    packed = gzip.compress(b'{"ok": true}')

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while True:
            await _read_request(reader)
            writer.write(_reply(packed, "content-encoding: gzip"))
            await writer.drain()

    async def test() -> None:
        server, url, _ = await _serve(handler)
        client = Client(timeout=5, connect_timeout=5)
        try:
            decoded = await client.send("GET", url, {}, None)
            assert decoded.headers.get("Content-Encoding") == "gzip"
            assert await decoded.aread() == b'{"ok": true}'
            raw = await client.send("GET", url, {}, None)
            assert b"".join([chunk async for chunk in raw.aiter_raw()]) == packed
        finally:
            await client.aclose()
            server.close()
            await server.wait_closed()

    _run(test)


def test_an_idle_connection_the_server_closed_is_replaced_transparently() -> None:
    async def one_answer_then_close(
        reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        await _read_request(reader)
        writer.write(_reply(b"fine"))  # keep-alive is promised, then the socket closes
        await writer.drain()

    async def test() -> None:
        server, url, connections = await _serve(one_answer_then_close)
        client = Client(timeout=5, connect_timeout=5)
        try:
            for _ in range(3):
                response = await client.send("POST", url, {}, b"{}")
                assert await response.aread() == b"fine"
                await asyncio.sleep(0.02)
        finally:
            await client.aclose()
            server.close()
            await server.wait_closed()
        assert len(connections) == 3

    _run(test)


def test_timeouts_refusals_and_truncated_bodies_are_errors() -> None:
    async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await _read_request(reader)
        await asyncio.sleep(2)

    async def truncated(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await _read_request(reader)
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\nonly this")
        await writer.drain()

    async def test() -> None:
        client = Client(timeout=0.2, connect_timeout=1)
        server, url, _ = await _serve(silent)
        try:
            with pytest.raises(UpstreamTimeout):
                await client.send("POST", url, {}, b"{}")
        finally:
            server.close()
            await server.wait_closed()
        with pytest.raises(HTTPError):
            await client.send("POST", url, {}, b"{}")  # nothing listens there any more
        server, url, _ = await _serve(truncated)
        try:
            response = await client.send("POST", url, {}, b"{}")
            with pytest.raises(HTTPError):
                await response.aread()
        finally:
            await client.aclose()
            server.close()
            await server.wait_closed()

    _run(test)
