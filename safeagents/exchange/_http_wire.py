"""The wire side of the upstream client: one connection's protocol and its parsed answer."""

from __future__ import annotations

import asyncio
import socket
from collections import deque
from collections.abc import Iterator
from typing import cast, overload

import httptools

__all__ = ["Connection", "HTTPError", "Headers", "UpstreamTimeout"]

_HIGH_WATER = 256 * 1024
_NO_BODY_STATUS = frozenset({204, 304})


class HTTPError(Exception):
    """The upstream connection failed or sent something that is not HTTP."""


class UpstreamTimeout(HTTPError):
    """Connecting, or waiting for the next bytes of an answer, took too long."""


class Headers:
    """Response headers: names lower-cased, order and repeats kept."""

    __slots__ = ("_items",)

    def __init__(self, items: list[tuple[str, str]]) -> None:
        self._items = items

    @overload
    def get(self, name: str) -> str | None: ...
    @overload
    def get(self, name: str, default: str) -> str: ...
    def get(self, name: str, default: str | None = None) -> str | None:
        name = name.lower()
        for key, value in self._items:
            if key == name:
                return value
        return default

    def items(self) -> list[tuple[str, str]]:
        return list(self._items)

    def __iter__(self) -> Iterator[str]:
        return (key for key, _ in self._items)

    def __getitem__(self, name: str) -> str:
        value = self.get(name)
        if value is None:
            raise KeyError(name)
        return value

    def keys(self) -> list[str]:
        return [key for key, _ in self._items]


class Connection(asyncio.Protocol):
    """One TCP (or TLS) connection and the answer being read from it."""

    def __init__(self, origin: tuple[str, str, int], read_timeout: float) -> None:
        self.origin = origin
        self.read_timeout = read_timeout
        self.transport: asyncio.Transport | None = None
        self.parser = httptools.HttpResponseParser(self)
        self.lost = False
        self.error: HTTPError | None = None
        self.headers: list[tuple[str, str]] = []
        self.header_done = False
        self.message_done = False
        self.delimited = False
        self.skip_body = False
        self.chunks: deque[bytes] = deque()
        self.buffered = 0
        self.reading_paused = False
        self.waiter: asyncio.Future[None] | None = None
        self.drained: asyncio.Future[None] | None = None
        self.received_any = False
        self.keep_alive = False

    # --- asyncio.Protocol
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)  # uvloop's is no subclass
        sock = transport.get_extra_info("socket")
        if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def connection_lost(self, exc: Exception | None) -> None:
        self.lost = True
        if self.header_done and not self.message_done and not self.delimited and exc is None:
            self.message_done = True  # the body ran to the end of the connection
        elif not self.message_done and self.error is None:
            self.error = HTTPError(f"upstream closed the connection: {exc!r}")
        self._wake()
        if self.drained is not None and not self.drained.done():
            self.drained.set_result(None)

    def data_received(self, data: bytes) -> None:
        self.received_any = True
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserError as error:
            self.error = HTTPError(f"malformed HTTP from the upstream: {error}")
            self.close()
        self._wake()

    def pause_writing(self) -> None:
        self.drained = asyncio.get_running_loop().create_future()

    def resume_writing(self) -> None:
        if self.drained is not None and not self.drained.done():
            self.drained.set_result(None)
        self.drained = None

    # --- httptools callbacks
    def on_header(self, name: bytes, value: bytes) -> None:
        key = name.decode("latin-1").lower()
        if key in ("content-length", "transfer-encoding"):
            self.delimited = True
        self.headers.append((key, value.decode("latin-1")))

    def on_headers_complete(self) -> None:
        self.header_done = True
        self.keep_alive = self.parser.should_keep_alive()  # reads False once the message ends
        status = self.parser.get_status_code()
        if status in _NO_BODY_STATUS or status < 200:
            self.delimited = True
        if self.skip_body:
            self.message_done = True

    def on_body(self, body: bytes) -> None:
        if self.message_done:
            return
        self.chunks.append(body)
        self.buffered += len(body)
        if self.buffered > _HIGH_WATER and self.transport is not None:
            self.transport.pause_reading()
            self.reading_paused = True

    def on_message_complete(self) -> None:
        self.message_done = True

    # --- used by Client and Response
    def _wake(self) -> None:
        if self.waiter is not None and not self.waiter.done():
            self.waiter.set_result(None)

    def begin(self, method: str) -> None:
        self.headers = []
        self.header_done = self.message_done = self.delimited = False
        self.skip_body = method == "HEAD"
        self.received_any = self.keep_alive = False
        self.chunks.clear()
        self.buffered = 0

    async def wait(self) -> None:
        """Until the parser made progress, the connection broke, or the read timeout."""
        if self.error is not None:
            raise self.error
        loop = asyncio.get_running_loop()
        self.waiter = waiter = loop.create_future()
        timer = loop.call_later(self.read_timeout, _expire, waiter)
        try:
            await waiter
        finally:
            timer.cancel()
            self.waiter = None
        if self.error is not None:
            raise self.error

    def take(self) -> bytes | None:
        """All body bytes read so far, joined (an SSE answer arrives as one HTTP chunk per
        event: handing them on together saves a parse per event); None when none wait."""
        if not self.chunks:
            return None
        chunk = self.chunks.popleft() if len(self.chunks) == 1 else b"".join(self.chunks)
        self.chunks.clear()
        self.buffered = 0
        if self.reading_paused and self.buffered <= _HIGH_WATER // 2 and self.transport:
            self.reading_paused = False
            self.transport.resume_reading()
        return chunk

    @property
    def reusable(self) -> bool:
        return (
            not self.lost
            and self.error is None
            and self.message_done
            and not self.skip_body
            and not self.chunks
            and self.keep_alive
        )

    def close(self) -> None:
        if self.transport is not None and not self.transport.is_closing():
            self.transport.close()
        self.lost = True


def _expire(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_exception(UpstreamTimeout("no answer from the upstream within the timeout"))
