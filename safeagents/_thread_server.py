"""Serving with uvicorn: an app on a loopback port in a background thread, and the lifespan
state that ends an app's streams when the server stops."""

from __future__ import annotations

import signal
import socket
import threading
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from types import FrameType, TracebackType
from typing import Any, Self

import uvicorn

from safeagents.plugins import ServerStopping

__all__ = ["ThreadedServer", "stopping_state"]

_STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)
_Handler = Callable[[int, FrameType | None], Any]


@asynccontextmanager
async def stopping_state() -> AsyncIterator[dict[str, Any]]:
    """Lifespan state holding a :class:`ServerStopping`, set as the server begins to stop.

    uvicorn waits for open responses before it runs the lifespan's shutdown, so the lifespan's
    end cannot be what tells streams to end: the signal that stops uvicorn does (its handler
    is chained and still called), or :meth:`ThreadedServer.stop`."""
    stopping = ServerStopping()
    chained: list[tuple[signal.Signals, _Handler, _Handler]] = []
    if threading.current_thread() is threading.main_thread():
        for number in _STOP_SIGNALS:
            previous = signal.getsignal(number)
            if callable(previous):
                handler = _chain(stopping, previous)
                signal.signal(number, handler)
                chained.append((number, handler, previous))
    try:
        yield {ServerStopping.KEY: stopping}
    finally:
        stopping.set()
        for number, handler, previous in chained:
            if signal.getsignal(number) is handler:
                signal.signal(number, previous)


def _chain(stopping: ServerStopping, previous: _Handler) -> _Handler:
    def handler(number: int, frame: FrameType | None) -> Any:
        stopping.set()
        return previous(number, frame)

    return handler


class ThreadedServer:
    """Serve ``app``; use as a context manager or call :meth:`start`/:meth:`stop`.

    ``port=0`` picks a free port; :attr:`url` is the root (``http://127.0.0.1:PORT``) and
    :attr:`base_url` the OpenAI-style base (``.../v1``).
    """

    label = "server"

    def __init__(self, app: Any, host: str, port: int, **uvicorn_options: Any) -> None:
        self.host = host
        self._socket = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        self._socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._socket.bind((host, port))
        self.port: int = self._socket.getsockname()[1]
        options: dict[str, Any] = {
            "log_level": "warning",
            "access_log": False,
            "ws": "none",
            "timeout_graceful_shutdown": 1,
            **uvicorn_options,
        }
        self._server = uvicorn.Server(uvicorn.Config(app, **options))
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def base_url(self) -> str:
        return f"{self.url}/v1"

    def start(self, timeout: float = 10.0) -> Self:
        """Start serving; returns once the socket accepts connections."""
        if self._thread is not None:
            return self
        self._thread = threading.Thread(
            target=self._server.run,
            kwargs={"sockets": [self._socket]},
            name=f"{self.label}-{self.port}",
            daemon=True,
        )
        self._thread.start()
        deadline = time.monotonic() + timeout
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError(f"{self.label} did not start on {self.url}")
            time.sleep(0.01)
        return self

    def stop(self, timeout: float = 10.0) -> None:
        """Stop serving and release the port."""
        if self._thread is not None:
            lifespan = getattr(self._server, "lifespan", None)  # uvicorn's, once started
            stopping = lifespan.state.get(ServerStopping.KEY) if lifespan is not None else None
            if isinstance(stopping, ServerStopping):
                stopping.set()
            self._server.should_exit = True
            self._thread.join(timeout)
            self._thread = None
        self._socket.close()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()
