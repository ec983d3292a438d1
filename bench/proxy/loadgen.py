"""An asyncio HTTP/1.1 load generator on raw keep-alive sockets.

Closed loop: ``concurrency`` clients, each sends its next request when the last one is done.
Open loop: requests are due at a fixed rate and every latency is timed from the intended send
time, so a slow server cannot hide its queue (no coordinated omission). Each request records
its latency, time to first byte, first token (:data:`TOKEN_MARKER`) and first tool-call byte
(:data:`CALL_MARKER`), and whether it failed.
"""

from __future__ import annotations

import asyncio
import itertools
import math
import re
import socket
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import cast

from bench.proxy.payloads import CALL_MARKER, TOKEN_MARKER
from bench.proxy.stats import Sample

__all__ = ["LoadError", "Target", "closed_loop", "open_loop", "request_bytes"]

_STATUS = re.compile(rb"HTTP/1\.[01] (\d{3})")
_CONTENT_LENGTH = re.compile(rb"\r\ncontent-length\s*:\s*(\d+)", re.IGNORECASE)
_CHUNKED = re.compile(rb"\r\ntransfer-encoding\s*:\s*chunked", re.IGNORECASE)
_MARKERS = (TOKEN_MARKER, CALL_MARKER)
_CARRY = max(len(m) for m in _MARKERS) - 1


class LoadError(Exception):
    """A request failed at the transport or HTTP level."""


@dataclass(frozen=True, slots=True)
class Target:
    host: str
    port: int
    path: str = "/v1/chat/completions"
    headers: tuple[tuple[str, str], ...] = ()
    expect: tuple[bytes, ...] = ()
    """Byte strings every successful answer contains (else the request counts as failed)."""
    unique_session: bool = False
    """Give each request its own ``x-session-id`` (a fresh proxy session)."""


def request_bytes(target: Target, body: bytes, session: str | None = None) -> bytes:
    lines = [
        f"POST {target.path} HTTP/1.1",
        f"host: {target.host}:{target.port}",
        "content-type: application/json",
        "accept-encoding: identity",
        f"content-length: {len(body)}",
        *(f"{name}: {value}" for name, value in target.headers),
    ]
    if session is not None:
        lines.append(f"x-session-id: {session}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


_SIZE, _DATA, _DATA_END, _TRAILER = range(4)


@dataclass(slots=True)
class _Exchange:
    """The state of one response being read."""

    keep_body: bool
    head: bytearray = field(default_factory=bytearray)
    body: bytearray = field(default_factory=bytearray)
    status: int = 0
    remaining: int = -1
    chunked: bool = False
    chunk_state: int = _SIZE
    chunk_left: int = 0
    chunk_buffer: bytearray = field(default_factory=bytearray)
    scanned: bytes = b""
    first_byte: float = math.nan
    finished: float = math.nan
    marks: list[float] = field(default_factory=lambda: [math.nan, math.nan])


class _Client(asyncio.Protocol):
    """One keep-alive connection; one request at a time."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.exchange: _Exchange | None = None
        self.done: asyncio.Future[None] | None = None
        self.closed = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)  # uvloop's is no subclass
        sock = transport.get_extra_info("socket")
        if sock is not None:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        if self.done is not None and not self.done.done():
            self.done.set_exception(LoadError(f"connection lost: {exc!r}"))

    def send(self, payload: bytes, exchange: _Exchange) -> asyncio.Future[None]:
        assert self.transport is not None
        self.exchange = exchange
        self.done = asyncio.get_running_loop().create_future()
        self.transport.write(payload)
        return self.done

    def data_received(self, data: bytes) -> None:
        ex = self.exchange
        if ex is None or self.done is None or self.done.done():
            return
        now = time.perf_counter()
        if math.isnan(ex.first_byte):
            ex.first_byte = now
        try:
            finished = _consume(ex, data, now)
        except (LoadError, ValueError) as error:
            self.done.set_exception(LoadError(str(error)))
            return
        if finished:
            ex.finished = now
            self.exchange = None
            self.done.set_result(None)

    def close(self) -> None:
        self.closed = True
        if self.transport is not None:
            self.transport.close()


def _consume(ex: _Exchange, data: bytes, now: float) -> bool:
    """Feed response bytes; True once the response is complete."""
    if ex.status == 0:
        ex.head += data
        end = ex.head.find(b"\r\n\r\n")
        if end < 0:
            return False
        head = bytes(ex.head[:end])
        status = _STATUS.match(head)
        if status is None:
            raise LoadError(f"not an HTTP response: {head[:60]!r}")
        ex.status = int(status.group(1))
        ex.chunked = _CHUNKED.search(head) is not None
        length = _CONTENT_LENGTH.search(head)
        ex.remaining = int(length.group(1)) if length else -1
        if not ex.chunked and ex.remaining < 0:
            raise LoadError("response without length")
        data = bytes(ex.head[end + 4 :])
    if ex.chunked:
        return _dechunk(ex, data, now)
    ex.remaining -= len(data)
    _scan(ex, data, now)
    if ex.remaining < 0:
        raise LoadError("response longer than its content-length")
    return ex.remaining == 0


def _dechunk(ex: _Exchange, data: bytes, now: float) -> bool:
    buffer = ex.chunk_buffer
    buffer += data
    while True:
        if ex.chunk_state == _DATA:
            piece = bytes(buffer[: ex.chunk_left])
            del buffer[: len(piece)]
            ex.chunk_left -= len(piece)
            if piece:
                _scan(ex, piece, now)
            if ex.chunk_left:
                return False
            ex.chunk_state = _DATA_END
        if ex.chunk_state == _DATA_END:
            if len(buffer) < 2:
                return False
            del buffer[:2]
            ex.chunk_state = _SIZE
        if ex.chunk_state == _SIZE:
            line_end = buffer.find(b"\r\n")
            if line_end < 0:
                return False
            size = int(bytes(buffer[:line_end]).split(b";")[0].strip(), 16)
            del buffer[: line_end + 2]
            if size:
                ex.chunk_left, ex.chunk_state = size, _DATA
                continue
            ex.chunk_state = _TRAILER
        return buffer.startswith(b"\r\n") or buffer.find(b"\r\n\r\n") >= 0


def _scan(ex: _Exchange, data: bytes, now: float) -> None:
    window = ex.scanned + data
    for index, marker in enumerate(_MARKERS):
        if math.isnan(ex.marks[index]) and marker in window:
            ex.marks[index] = now
    ex.scanned = window[-_CARRY:]
    if ex.keep_body:
        ex.body += data


async def _connect(target: Target) -> _Client:
    loop = asyncio.get_running_loop()
    _, client = await loop.create_connection(_Client, target.host, target.port)
    return client


async def _exchange(
    client: _Client, target: Target, payload: bytes, intended: float, timeout: float
) -> Sample:
    validate = bool(target.expect)
    exchange = _Exchange(keep_body=validate)
    sent = time.perf_counter()
    error: str | None = None
    try:
        await asyncio.wait_for(client.send(payload, exchange), timeout)
    except (LoadError, OSError, TimeoutError) as failure:
        error = f"{type(failure).__name__}: {failure}"
        client.close()
    end = exchange.finished if error is None else time.perf_counter()
    if error is None and exchange.status != 200:
        error = f"status {exchange.status}"
    if error is None and validate:
        body = bytes(exchange.body)
        missing = [m for m in target.expect if m not in body]
        if missing:
            error = f"answer lacks {missing[0]!r}"
    return Sample(
        intended=intended,
        sent=sent,
        first_byte=exchange.first_byte,
        first_token=exchange.marks[0],
        first_call=exchange.marks[1],
        done=end,
        error=error,
    )


_session_counter = itertools.count()


def _payload(target: Target, body: bytes, fixed: bytes) -> bytes:
    if target.unique_session:
        return request_bytes(target, body, f"bench-{time.time_ns()}-{next(_session_counter)}")
    return fixed


async def closed_loop(
    target: Target,
    bodies: Sequence[bytes],
    *,
    concurrency: int,
    duration: float,
    warmup: float = 0.0,
    timeout: float = 10.0,
    max_requests: int | None = None,
) -> list[Sample]:
    """``concurrency`` clients back to back for ``duration`` s after ``warmup`` s; client k
    sends ``bodies[k % len(bodies)]`` (one session each when bodies differ by user)."""
    samples: list[Sample] = []
    start = time.perf_counter()
    measure_from = start + warmup
    deadline = measure_from + duration
    budget = [max_requests if max_requests is not None else -1]

    async def client_loop(user: int) -> None:
        body = bodies[user % len(bodies)]
        fixed = request_bytes(target, body)
        client: _Client | None = None
        while time.perf_counter() < deadline and budget[0] != 0:
            if client is None or client.closed:
                try:
                    client = await _connect(target)
                except OSError as failure:
                    now = time.perf_counter()
                    if now >= measure_from:
                        samples.append(Sample(now, now, done=now, error=repr(failure)))
                    await asyncio.sleep(0.01)
                    continue
            now = time.perf_counter()
            sample = await _exchange(client, target, _payload(target, body, fixed), now, timeout)
            if sample.intended >= measure_from:
                samples.append(sample)
                if budget[0] > 0:
                    budget[0] -= 1
        if client is not None:
            client.close()

    await asyncio.gather(*(client_loop(user) for user in range(concurrency)))
    return samples


async def open_loop(
    target: Target,
    bodies: Sequence[bytes],
    *,
    rate: float,
    duration: float,
    warmup: float = 0.0,
    timeout: float = 5.0,
    max_connections: int = 512,
) -> list[Sample]:
    """Requests due every ``1/rate`` s; latency counts from when each was due."""
    loop = asyncio.get_running_loop()
    idle: list[_Client] = []
    opened = 0
    freed: asyncio.Queue[None] = asyncio.Queue()
    samples: list[Sample] = []
    tasks: set[asyncio.Task[None]] = set()
    start = time.perf_counter() + 0.05
    measure_from = start + warmup
    total = int((warmup + duration) * rate)
    for _ in range(min(max_connections, max(4, int(rate * 0.01)))):
        idle.append(await _connect(target))
        opened += 1

    async def one(index: int, intended: float) -> None:
        nonlocal opened
        body = bodies[index % len(bodies)]
        client: _Client | None = None
        while client is None:
            if idle:
                client = idle.pop()
            elif opened < max_connections:
                opened += 1
                try:
                    client = await _connect(target)
                except OSError as failure:
                    opened -= 1
                    now = time.perf_counter()
                    if intended >= measure_from:
                        samples.append(Sample(intended, now, done=now, error=repr(failure)))
                    return
            else:
                await freed.get()
        waited = time.perf_counter() - intended
        payload = _payload(target, body, request_bytes(target, body))
        sample = await _exchange(client, target, payload, intended, max(0.001, timeout - waited))
        if intended >= measure_from:
            samples.append(sample)
        if client.closed:
            opened -= 1
        else:
            idle.append(client)
        freed.put_nowait(None)

    for index in range(total):
        intended = start + index / rate
        delay = intended - time.perf_counter()
        if delay > 0:
            await asyncio.sleep(delay)
        task = loop.create_task(one(index, intended))
        tasks.add(task)
        task.add_done_callback(tasks.discard)
    if tasks:
        await asyncio.wait(set(tasks), timeout=timeout + 1)
    for task in list(tasks):
        task.cancel()
    for client in idle:
        client.close()
    return samples
