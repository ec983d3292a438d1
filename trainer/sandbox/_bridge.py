"""The outside end of a sandbox's only way out: a unix socket that forwards HTTP requests for
one proxy session, and nothing else, to the proxy.

Each connection carries one request. The bridge reads its head, refuses (403) a target that
is not under the session's ``/s/{id}/`` path (the proxy's admin API, another session, an
absolute URL, dot segments or encoded separators), refuses (429) model requests past the
step limit, forces ``Connection: close`` and relays the bytes both ways, so a streamed answer
reaches the harness as the proxy sends it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
from pathlib import Path

__all__ = ["ProxyBridge"]

_HEAD_LIMIT = 64 * 1024
_CHUNK = 65536
_SUSPECT = re.compile(r"/\.|%2e|%2f|%5c|\\", re.IGNORECASE)
_CONNECTION = re.compile(rb"^(connection|keep-alive|proxy-connection)\s*:", re.IGNORECASE)


def _reply(status: int, reason: str, message: str) -> bytes:
    body = json.dumps({"error": {"message": message, "type": "sandbox"}}).encode()
    head = (
        f"HTTP/1.1 {status} {reason}\r\ncontent-type: application/json\r\n"
        f"content-length: {len(body)}\r\nconnection: close\r\n\r\n"
    )
    return head.encode() + body


class ProxyBridge:
    """Serves ``socket_path`` for the session ``session_id`` of the proxy at host:port."""

    def __init__(
        self,
        socket_path: Path,
        *,
        host: str,
        port: int,
        session_id: str,
        max_requests: int | None,
    ) -> None:
        self.socket_path = socket_path
        self.host = host
        self.port = port
        self.prefix = f"/s/{session_id}/"
        self.max_requests = max_requests
        self.requests = 0
        """Model requests (``POST``s under the session path) let through."""
        self.refused: list[str] = []
        self.limit_reached = asyncio.Event()
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._closing = False
        """Set by :meth:`close`: a connection accepted but not yet served is only closed."""

    async def start(self) -> None:
        self._server = await asyncio.start_unix_server(
            self._connection, path=str(self.socket_path), limit=_HEAD_LIMIT
        )

    async def close(self) -> None:
        self._closing = True
        if self._server is not None:
            self._server.close()
            for task in list(self._tasks):
                task.cancel()
            await asyncio.gather(*self._tasks, return_exceptions=True)
            await self._server.wait_closed()
            self._server = None
        with contextlib.suppress(FileNotFoundError):
            self.socket_path.unlink()

    async def __aenter__(self) -> ProxyBridge:
        await self.start()
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.close()

    def _verdict(self, request_line: str) -> bytes | None:
        """The refusal for ``request_line``, or ``None`` to forward it."""
        parts = request_line.split(" ")
        if len(parts) != 3 or not parts[2].startswith("HTTP/1."):
            return _reply(400, "Bad Request", "not an HTTP/1.x request")
        method, target, _ = parts
        if not target.startswith(self.prefix) or _SUSPECT.search(target):
            self.refused.append(f"{method} {target[:200]}")
            return _reply(403, "Forbidden", f"the sandbox reaches only {self.prefix}")
        if method == "POST":
            if self.max_requests is not None and self.requests >= self.max_requests:
                self.limit_reached.set()
                return _reply(429, "Too Many Requests", "the rollout's step limit is reached")
            self.requests += 1
        return None

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        try:
            if not self._closing:
                await self._forward(reader, writer)
        except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            pass
        except asyncio.CancelledError:
            # The task is asyncio's (start_unix_server), whose done-callback asks it for its
            # exception, which raises on a cancelled task (Python 3.11): cancelled by close()
            # or at shutdown, it ends the connection and returns.
            task.uncancel()
        finally:
            self._tasks.discard(task)
            writer.close()
            with contextlib.suppress(OSError):
                await writer.wait_closed()

    async def _forward(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except asyncio.LimitOverrunError:
            writer.write(_reply(431, "Request Header Fields Too Large", "request head too big"))
            await writer.drain()
            return
        lines = head[:-4].split(b"\r\n")
        refusal = self._verdict(lines[0].decode("latin-1"))
        if refusal is not None:
            writer.write(refusal)
            await writer.drain()
            return
        kept = [line for line in lines[1:] if not _CONNECTION.match(line)]
        head = b"\r\n".join([lines[0], *kept, b"connection: close", b"", b""])
        up_reader, up_writer = await asyncio.open_connection(self.host, self.port)
        try:
            up_writer.write(head)
            sending = asyncio.create_task(_pipe(reader, up_writer))
            try:
                await _pipe(up_reader, writer)
            finally:
                sending.cancel()
                with contextlib.suppress(asyncio.CancelledError, OSError):
                    await sending
        finally:
            up_writer.close()
            with contextlib.suppress(OSError):
                await up_writer.wait_closed()


async def _pipe(source: asyncio.StreamReader, target: asyncio.StreamWriter) -> None:
    while chunk := await source.read(_CHUNK):
        target.write(chunk)
        await target.drain()
    if target.can_write_eof():
        with contextlib.suppress(OSError):
            target.write_eof()
