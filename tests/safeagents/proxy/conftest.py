from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from multiproxy_kit import STORE_ENV, shared_store
from proxy_testkit import StartProxy

from safeagents import Firewall
from safeagents.proxy import ProxyConfig, ProxyServer
from safeagents.scripted import Script, ScriptedServer


@pytest.fixture(scope="session")
def bundled_firewall() -> Firewall:
    return Firewall.load()


@pytest.fixture(scope="module")
def upstream() -> Iterator[ScriptedServer]:
    with ScriptedServer(Script.from_data([])) as server:
        yield server


@pytest.fixture
def scripted(upstream: ScriptedServer) -> ScriptedServer:
    """The module's scripted model with a clean request log (set its script per test)."""
    upstream.model.clear()
    return upstream


def _stop_all(servers: list[ProxyServer]) -> None:
    """Stop servers in parallel (each takes a few uvicorn ticks to wind down)."""
    with ThreadPoolExecutor(max_workers=max(1, len(servers))) as pool:
        list(pool.map(lambda server: server.stop(), servers))


@pytest.fixture(scope="module")
def _proxies(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[Any, ProxyServer]]:
    running: dict[Any, ProxyServer] = {}
    yield running
    _stop_all(list(running.values()))


@pytest.fixture
def start_proxy(
    tmp_path_factory: pytest.TempPathFactory,
    bundled_firewall: Firewall,
    _proxies: dict[Any, ProxyServer],
) -> Iterator[StartProxy]:
    """Start (or reuse, within a module) a proxy for ``upstream_url`` with ``options``.

    Proxies with equal options are shared by the tests of a module (they use distinct
    session ids); ``fresh=True`` starts a private one on ``store`` (or a new file)."""
    private: list[ProxyServer] = []

    def start(
        upstream_url: str, *, firewall: Firewall | None = None, fresh: bool = False, **options: Any
    ) -> ProxyServer:
        firewall = firewall or bundled_firewall
        key = (upstream_url, id(firewall), tuple(sorted(options.items())))
        if not fresh and key in _proxies:
            return _proxies[key]
        directory = tmp_path_factory.mktemp("proxy")
        options.setdefault("store", str(directory / "safeagents.db"))
        config = ProxyConfig(upstream=upstream_url, **options)
        server = ProxyServer(config, firewall=firewall, port=0).start()
        if fresh:
            private.append(server)
        else:
            _proxies[key] = server
        return server

    yield start
    _stop_all(private)


@pytest.fixture
def sid(request: pytest.FixtureRequest) -> str:
    """A session id unique to the test."""
    return "t-" + uuid.uuid4().hex[:12]


@pytest.fixture(params=["sqlite", "postgres"])
def store_location(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """The store several instances of a test share: ``$SAFEAGENTS_TEST_STORE`` when set,
    else a new SQLite file, then a new PostgreSQL database (tests/postgres_kit.py)."""
    if os.environ.get(STORE_ENV) or request.param == "sqlite":
        return shared_store(tmp_path)
    url: str = request.getfixturevalue("postgres_url")
    return url
