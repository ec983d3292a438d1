"""A real proxy in front of the scripted model, shared by a module's tests."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

from safeagents import Firewall
from safeagents.proxy import ProxyConfig, ProxyServer
from safeagents.scripted import Script, ScriptedServer


@pytest.fixture(scope="session")
def firewall() -> Firewall:
    return Firewall.load()


@pytest.fixture(scope="module")
def scripted() -> Iterator[ScriptedServer]:
    with ScriptedServer(Script.from_data([])) as server:
        yield server


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def store_location(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> str:
    """A fresh store of each backend for a module's proxy: the console works on either."""
    if request.param == "sqlite":
        return str(tmp_path_factory.mktemp("console") / "safeagents.db")
    return str(request.getfixturevalue("postgres_server").database())


@pytest.fixture(scope="module")
def proxy(
    scripted: ScriptedServer, firewall: Firewall, store_location: str
) -> Iterator[ProxyServer]:
    config = ProxyConfig(upstream=scripted.base_url, store=store_location)
    server = ProxyServer(config, firewall=firewall, port=0).start()
    yield server
    server.stop()


@pytest.fixture
def sid() -> str:
    return "c-" + uuid.uuid4().hex[:12]
