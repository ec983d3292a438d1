"""An open console tab (its server-sent-event stream) never holds a server's shutdown: the
stream ends as the server begins to stop, and nothing is logged as an error."""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

from safeagents import Firewall
from safeagents.proxy import ProxyConfig, ProxyServer
from safeagents.scripted import ScriptedServer


class _Kept(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@contextmanager
def kept_warnings() -> Iterator[list[logging.LogRecord]]:
    """Warnings and errors logged meanwhile, uvicorn's included (it does not propagate to the
    root, and sets its loggers up when a server is made: enter this after)."""
    handler = _Kept()
    loggers = [logging.getLogger(), logging.getLogger("uvicorn")]
    for logger in loggers:
        logger.addHandler(handler)
    try:
        yield handler.records
    finally:
        for logger in loggers:
            logger.removeHandler(handler)


def test_an_open_list_stream_ends_when_the_proxy_stops(
    scripted: ScriptedServer, firewall: Firewall, tmp_path: Path
) -> None:
    config = ProxyConfig(upstream=scripted.base_url, store=str(tmp_path / "safeagents.db"))
    server = ProxyServer(config, firewall=firewall, port=0).start()
    try:
        with (
            kept_warnings() as logged,
            httpx.stream("GET", f"{server.url}/ui/events", timeout=10) as response,
        ):
            chunks = response.iter_raw()
            assert next(chunks).startswith(b"retry:")
            started = time.monotonic()
            server.stop()
            stopped = time.monotonic() - started
            rest = b"".join(chunks)  # the response ended: no error reading its end
    finally:
        server.stop()
    assert [record.getMessage() for record in logged] == []
    assert stopped < 1.0, f"the server took {stopped:.2f} s to stop with a tab open"
    assert b"event:" not in rest
