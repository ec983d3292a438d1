"""Hook specifications: the one place that says how to extend safeagents.

Sinks (exporters, trainers) implement ``turn_recorded`` and ``session_closed``; the proxy
calls them in a worker thread after the store has the data, so a slow sink never delays a
harness. Add-ons such as the trainer add subcommands to the ``safeagents`` command line
(``safeagents_cli_commands``) and hooks of their own (``safeagents_addhooks``).

Built-in harness plugins and detectors register through these same hooks, from the
entry-point group ``safeagents``, exactly like third-party plugins. A plugin module
exposes functions decorated with :data:`hookimpl`::

    from safeagents.plugins import hookimpl

    @hookimpl
    def safeagents_harnesses():
        return [MyHarness()]
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

import pluggy

if TYPE_CHECKING:
    import argparse
    from pathlib import Path

    from starlette.types import ASGIApp

    from safeagents._detector import Detector
    from safeagents._harness import Harness
    from safeagents.store import SessionRecord, TurnRecord

__all__ = ["PROJECT_NAME", "ConsoleSection", "ServerStopping", "hookimpl", "hookspec"]

PROJECT_NAME = "safeagents"
hookspec = pluggy.HookspecMarker(PROJECT_NAME)
hookimpl = pluggy.HookimplMarker(PROJECT_NAME)


@hookspec(historic=True)
def safeagents_addhooks(pluginmanager: pluggy.PluginManager) -> None:
    """Add the plugin's own hook specifications: ``pluginmanager.add_hookspecs(module)``.

    Called once for every plugin as it registers, before its other hooks are used.
    """


@hookspec
def safeagents_cli_commands(subparsers: argparse._SubParsersAction[Any]) -> None:
    """Add subcommands to the ``safeagents`` command line.

    ``subparsers.add_parser(NAME, help=…)`` adds one; ``set_defaults(run=FUNCTION)`` on it names
    the function that runs it, called as ``FUNCTION(args, out, err)`` with the parsed
    ``argparse.Namespace`` and rich consoles for standard output and standard error; it
    returns the exit status.
    """


class ConsoleSection(NamedTuple):
    """A section an add-on adds to the web console: ``title`` in its navigation, served
    under ``/ui/{path}/`` by ``app`` (the console checks access before the request reaches
    it; ``scope["root_path"]`` tells the app where it is mounted). A response that streams
    (server-sent events) waits on :meth:`ServerStopping.of` its scope between its writes."""

    title: str
    path: str
    app: ASGIApp


class ServerStopping:
    """Set when the server begins to stop. A response that streams until the client goes
    away (server-sent events) waits on it alongside its data and ends when it is set, so an
    open browser tab never holds a shutdown. The app that serves the console creates one in
    its lifespan and puts it in the lifespan state (:attr:`KEY`), which every request's scope
    carries, mounted apps' included."""

    KEY = "safeagents.server_stopping"

    def __init__(self) -> None:
        self._event = asyncio.Event()
        self._loop = asyncio.get_running_loop()

    def set(self) -> None:
        """Safe from any thread and from a signal handler."""
        with contextlib.suppress(RuntimeError):  # the loop is already closed: nothing waits
            self._loop.call_soon_threadsafe(self._event.set)

    def is_set(self) -> bool:
        return self._event.is_set()

    async def wait(self, seconds: float) -> bool:
        """Wait ``seconds``, less if the server begins to stop meanwhile: whether it did."""
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(seconds):
                await self._event.wait()
        return self._event.is_set()

    @classmethod
    def of(cls, scope: Mapping[str, Any]) -> ServerStopping:
        """The server's, from a request's scope; one never set where the app that serves
        the request keeps none."""
        found = scope.get("state", {}).get(cls.KEY)
        return found if isinstance(found, ServerStopping) else cls()


@hookspec
def safeagents_console_sections(runs: Sequence[Path]) -> Sequence[ConsoleSection]:  # type: ignore[empty-body]
    """Sections of the web console this plugin provides. ``runs`` are the directories of
    training runs and evaluations the console was pointed at (``--runs``), possibly none."""


@hookspec
def safeagents_harnesses() -> Sequence[Harness]:  # type: ignore[empty-body]
    """Harness plugins this module provides (tool map, detection, launch recipe)."""


@hookspec
def safeagents_detectors() -> Sequence[Detector]:  # type: ignore[empty-body]
    """Named Python detectors that rules can use as ``detector: NAME``."""


@hookspec
def turn_recorded(turn: TurnRecord) -> None:
    """A turn (one upstream exchange: the harness's request or a re-ask) is in the store.

    ``turn.request`` is the request as the upstream saw it (hidden history spliced in),
    ``turn.response`` its answer, ``turn.delivered`` what the harness received, and
    ``turn.tokens`` the engine's token ids and logprobs when ``--capture-tokens`` is on.
    """


@hookspec
def session_closed(session: SessionRecord) -> None:
    """A session got its outcome from the verifier (``POST …/sessions/{id}/outcome``), so its
    score is complete: ``session.hacked``, ``session.findings`` and ``session.outcome``."""
