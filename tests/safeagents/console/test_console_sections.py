"""Add-on sections behind the console's access check, the standalone app, and the modules'
``__all__``."""

from __future__ import annotations

import asyncio
import importlib
from pathlib import Path
from types import FunctionType

import pluggy
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route
from starlette.testclient import TestClient

from safeagents import Firewall, load_registry
from safeagents._registry import PluginError
from safeagents.console import plugin_sections, standalone_app
from safeagents.exchange import Credentials, ProxyConfig
from safeagents.plugins import ConsoleSection, hookimpl
from safeagents.store import SessionUpdate, SQLiteStore


def _section_app() -> Starlette:
    async def home(request: Request) -> Response:
        return PlainTextResponse(f"runs at {request.scope['root_path']}")

    return Starlette(routes=[Route("/", home)])


class _Plugin:
    def __init__(self, *sections: ConsoleSection) -> None:
        self.sections = sections
        self.runs: list[list[Path]] = []

    @hookimpl
    def safeagents_console_sections(self, runs: list[Path]) -> list[ConsoleSection]:
        self.runs.append(runs)
        return list(self.sections)


def _store(path: Path) -> SQLiteStore:
    async def fill() -> None:
        store = SQLiteStore(path)
        await store.record_exchange(SessionUpdate("s1", "pi", "chat", "/w", "m", "root"), [])
        await store.close()

    asyncio.run(fill())
    return SQLiteStore(path)


def test_sections_are_mounted_listed_and_guarded(tmp_path: Path) -> None:
    plugin = _Plugin(ConsoleSection("Extra", "extra", _section_app()))
    registry = load_registry(plugins=[plugin])
    sections = plugin_sections(registry, [tmp_path])
    assert plugin.runs == [[tmp_path]]
    credentials = Credentials(ProxyConfig(upstream="http://x/", admin_token="t"))
    app = standalone_app(_store(tmp_path / "s.db"), Firewall.load(), credentials, sections=sections)
    with TestClient(app) as client:
        assert client.get("/ui/extra/").status_code == 401
        headers = {"Authorization": "Bearer t"}
        section = client.get("/ui/extra/", headers=headers)
        assert section.status_code == 200 and section.text == "runs at /ui/extra"
        listing = client.get("/ui/", headers=headers)
        assert 'href="/ui/extra/">Extra</a>' in listing.text
        assert 'id="session-s1"' in listing.text
        own = {"Authorization": "Bearer sa-s1"}  # no secret set for a bare key: grants nothing
        assert client.get("/ui/extra/", headers=own).status_code == 401
        assert client.get("/", follow_redirects=False).headers["location"] == "/ui/"


@pytest.mark.parametrize(
    ("sections", "says"),
    [
        (("not a section",), "must be a ConsoleSection"),
        ((ConsoleSection("Rules", "rules", _section_app()),), "not one free path segment"),
        ((ConsoleSection("Deep", "a/b", _section_app()),), "not one free path segment"),
        (
            (
                ConsoleSection("One", "runs", _section_app()),
                ConsoleSection("Two", "/runs/", _section_app()),
            ),
            "two console sections",
        ),
    ],
)
def test_malformed_sections_are_refused(sections: tuple[object, ...], says: str) -> None:
    registry = load_registry(entry_points=False, plugins=[_Plugin(*sections)])  # type: ignore[arg-type]
    with pytest.raises(PluginError, match=says):
        plugin_sections(registry, [])


def test_without_plugins_there_are_no_sections() -> None:
    registry = load_registry(entry_points=False)
    assert isinstance(registry.plugin_manager, pluggy.PluginManager)
    assert plugin_sections(registry, []) == ()


def test_the_trainers_section_is_found_through_its_entry_point(tmp_path: Path) -> None:
    sections = plugin_sections(load_registry(), [tmp_path])
    assert [section.path for section in sections] == ["training"]
    credentials = Credentials(ProxyConfig(upstream="http://x/"))
    app = standalone_app(_store(tmp_path / "s.db"), Firewall.load(), credentials, sections=sections)
    with TestClient(app) as client:
        page = client.get("/ui/training/")
        assert page.status_code == 200 and 'href="/ui/static/console.css"' in page.text
        assert client.get("/ui/static/console.css").status_code == 200
        assert 'href="/ui/training/">' in client.get("/ui/").text


@pytest.mark.parametrize(
    "name",
    [
        "safeagents.console",
        "safeagents.console._access",
        "safeagents.console._app",
        "safeagents.console._context",
        "safeagents.console._events",
        "safeagents.console._filters",
        "safeagents.console._rules",
        "safeagents.console._sections",
        "safeagents.console._standalone",
        "safeagents.console._transcript",
        "safeagents.console._views",
    ],
)
def test_all_names_exactly_what_each_module_defines_publicly(name: str) -> None:
    module = importlib.import_module(name)
    defined = {
        key
        for key, value in vars(module).items()
        if not key.startswith("_")
        and isinstance(value, (type, FunctionType))
        and value.__module__ == name
    }
    assert defined <= set(module.__all__)
    assert all(hasattr(module, key) for key in module.__all__)
