"""Running the proxy: ``serve`` (uvicorn, one or more workers) and an in-thread server."""

from __future__ import annotations

import asyncio
import copy
import ctypes
import gc
import logging
import os
import signal
import sys
import threading
import time
from collections import deque
from typing import Any

import uvicorn
from starlette.applications import Starlette
from uvicorn.config import LOGGING_CONFIG

from safeagents._firewall import Firewall
from safeagents._registry import default_registry
from safeagents._thread_server import ThreadedServer
from safeagents.exchange import ProxyConfig, canonical_aliases, start_aliases
from safeagents.proxy._app import create_app
from safeagents.store import Store, open_store

__all__ = [
    "CONFIG_ENV",
    "SUPERVISOR_ENV",
    "DeferredStreamHandler",
    "ProxyServer",
    "app_from_env",
    "die_with_parent",
    "serve",
]

CONFIG_ENV = "SAFEAGENTS_PROXY_CONFIG"
SUPERVISOR_ENV = "SAFEAGENTS_PROXY_SUPERVISOR"
"""The supervisor's pid, for its workers: they end when it is gone."""
WATCH_INTERVAL = 0.5
"""Seconds between a worker's checks that its supervisor is still its parent."""
EXIT_GRACE = 10.0
"""Seconds a worker orphaned by its supervisor may take to shut down before it exits hard."""
_PR_SET_PDEATHSIG = 1


def app_from_env() -> Starlette:
    """The app of a worker process (``--workers N``): its config comes from the parent."""
    supervisor = os.environ.get(SUPERVISOR_ENV)
    if supervisor:
        die_with_parent(int(supervisor))
    app = create_app(ProxyConfig.from_json(os.environ[CONFIG_ENV]), seed_aliases=False)
    _settle_heap()
    return app


def die_with_parent(parent: int) -> None:
    """End this worker when ``parent`` (its supervisor) is gone, however it died.

    Linux sends SIGTERM at once (``PR_SET_PDEATHSIG``); elsewhere, and should the parent
    have died before that was set, a watchdog thread notices the new parent within
    ``WATCH_INTERVAL``. SIGTERM lets uvicorn shut down gracefully; a worker still running
    ``EXIT_GRACE`` seconds later exits hard, so the port is freed for a restart."""
    if sys.platform == "linux":
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGTERM), 0, 0, 0)
        except (OSError, AttributeError):
            pass
    threading.Thread(
        target=_watch_parent, args=(parent,), name="safeagents-parent-watch", daemon=True
    ).start()


def _watch_parent(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(WATCH_INTERVAL)
    os.kill(os.getpid(), signal.SIGTERM)
    time.sleep(EXIT_GRACE)
    os._exit(1)


def _settle_heap() -> None:
    """Exempt what start-up built (modules, rules, analysers) from garbage collection, so a
    full collection walks only what requests allocate: pauses of ~15 ms become ~2 ms."""
    gc.collect()
    gc.freeze()


def serve(
    config: ProxyConfig,
    *,
    firewall: Firewall | None = None,
    workers: int = 1,
    log_level: str = "warning",
) -> None:
    """Serve until interrupted; rules were validated by the caller.

    ``firewall`` is the caller's, of ``config``'s rules; worker processes load their own."""
    target: str | Starlette
    if workers > 1:
        asyncio.run(_seed_aliases(config))
        os.environ[CONFIG_ENV] = config.to_json()
        os.environ[SUPERVISOR_ENV] = str(os.getpid())
        target = "safeagents.proxy._serve:app_from_env"
    else:
        target = create_app(config, firewall=firewall)
        _settle_heap()
    uvicorn.run(
        target,
        factory=workers > 1,
        workers=workers if workers > 1 else None,
        host=config.host,
        port=config.port,
        log_config=_LOG_CONFIG,
        log_level=log_level,
        lifespan="on",
        ws="none",
        access_log=log_level in ("info", "debug", "trace"),
        timeout_graceful_shutdown=5,
    )


class DeferredStreamHandler(logging.StreamHandler[Any]):
    """A stream handler that writes a record logged on a running event loop once the loop's
    current callback is done, in the order logged (at once elsewhere, and on ``flush``).

    uvicorn logs a request's access line as the answer starts, before the head is written:
    formatting it and its ``write(2)`` (31 µs, several times that with the disk busy) held
    back every answer, and a stream's check and record too."""

    def __init__(self, stream: Any = None) -> None:
        super().__init__(stream)
        self._pending: deque[logging.LogRecord] = deque()
        self._draining = False

    def emit(self, record: logging.LogRecord) -> None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self.flush()
            super().emit(record)
            return
        if not self._pending:
            loop.call_soon(self.flush)
        self._pending.append(record)

    def flush(self) -> None:
        self.acquire()
        try:
            if not self._draining:  # StreamHandler.emit flushes after each record
                self._draining = True
                try:
                    while self._pending:
                        super().emit(self._pending.popleft())
                finally:
                    self._draining = False
            super().flush()
        finally:
            self.release()


_LOG_CONFIG = copy.deepcopy(LOGGING_CONFIG)
_LOG_CONFIG["handlers"]["access"]["class"] = f"{__name__}.DeferredStreamHandler"


async def _seed_aliases(config: ProxyConfig) -> None:
    """The ``--model-alias`` flags into the store, once, before the workers start."""
    aliases = canonical_aliases(default_registry(), config.model_aliases)
    store = open_store(config.store)
    try:
        await start_aliases(store, aliases)
    finally:
        await store.close()


class ProxyServer(ThreadedServer):
    """The proxy on a loopback port in a background thread (tests, ``safeagents demo``).

    ``port`` defaults to ``config.port`` (0 picks a free one); :attr:`url` is the root and
    :attr:`base_url` adds ``/v1``.
    """

    label = "safeagents proxy"

    def __init__(
        self,
        config: ProxyConfig,
        *,
        firewall: Firewall | None = None,
        store: Store | None = None,
        port: int | None = None,
    ) -> None:
        self.app = create_app(config, firewall=firewall, store=store)
        super().__init__(
            self.app, config.host, config.port if port is None else port, lifespan="on"
        )

    def session_url(self, session_id: str) -> str:
        """A base URL that puts every request in session ``session_id``."""
        return f"{self.url}/s/{session_id}/v1"
