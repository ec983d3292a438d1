"""Plugin discovery: built-in and third-party harnesses and detectors, through pluggy hooks.

Built-ins are registered through the same hooks third parties use; third parties are
found through the ``safeagents`` entry-point group (``SAFEAGENTS_LOAD_PLUGINS``, a comma
list of entry-point names, restricts which of them load; empty loads none).
"""

from __future__ import annotations

import functools
import importlib
import json
import logging
import os
from collections.abc import Collection, Iterable, Mapping, Sequence
from types import MappingProxyType
from typing import Any, TypeVar

import pluggy

import safeagents.plugins
from safeagents._actions import AnalysisContext, Effect, ToolCall
from safeagents._detector import Detector
from safeagents._generic import GenericHarness
from safeagents._harness import Harness
from safeagents.plugins import PROJECT_NAME

__all__ = [
    "DEFAULT_PLUGINS",
    "ENV_LOAD_PLUGINS",
    "FALLBACK_HARNESS",
    "OPTIONAL_DEFAULT_PLUGINS",
    "PluginError",
    "Registry",
    "UnknownHarnessError",
    "default_registry",
    "load_registry",
]

logger = logging.getLogger(__name__)

DEFAULT_PLUGINS: tuple[str, ...] = (
    "harness_plugins.pi",
    "harness_plugins.opencode",
    "harness_plugins.hermes",
    "harness_plugins.claude_code",
    "harness_plugins.codex",
    "harness_plugins.mini_swe_agent",
    "harness_plugins.swe_agent",
    "safeagents._generic",
    "safeagents.detectors",
)
OPTIONAL_DEFAULT_PLUGINS: frozenset[str] = frozenset({"safeagents.detectors"})
"""Built-ins whose absence is logged instead of raised (developed separately)."""
ENV_LOAD_PLUGINS = "SAFEAGENTS_LOAD_PLUGINS"
FALLBACK_HARNESS = "generic"
_RAW_ARGUMENTS_LIMIT = 2000

_Named = TypeVar("_Named", Harness, Detector)


class UnknownHarnessError(ValueError):
    """No harness plugin has the requested name or alias."""

    def __init__(self, name: str, known: Iterable[str]) -> None:
        self.name = name
        self.known = sorted(known)
        super().__init__(f"unknown harness {name!r}; known harnesses: {', '.join(self.known)}")


class PluginError(ValueError):
    """A plugin returned something unusable, or a name another plugin already has."""


_DETECT_CACHE_SIZE = 1024


class Registry:
    """The harnesses and detectors all registered plugins provide."""

    def __init__(self, pm: pluggy.PluginManager) -> None:
        self.plugin_manager = pm
        harnesses = _collect(pm, "safeagents_harnesses", Harness)
        detectors = _collect(pm, "safeagents_detectors", Detector)
        self.harnesses: Mapping[str, Harness] = MappingProxyType(
            {harness.name: harness for harness, _ in harnesses}
        )
        self.detectors: Mapping[str, Detector] = MappingProxyType(
            {detector.name: detector for detector, _ in detectors}
        )
        self._lookup = _lookup_table(harnesses)
        self._fallback = self._lookup.get(FALLBACK_HARNESS) or GenericHarness()
        self._warned_unknown: set[str] = set()
        self._detected: dict[frozenset[str], Harness] = {}

    def harness(self, name: str) -> Harness:
        """The harness called ``name`` or with that alias (case-insensitive)."""
        harness = self._lookup.get(name.strip().lower())
        if harness is None:
            raise UnknownHarnessError(name, self.harnesses)
        return harness

    def detect(self, tool_names: Collection[str]) -> Harness:
        """The harness whose tools best fit a request's tool list; the generic one if none.

        A harness's score depends on the set of names only, so the answer is remembered per
        set: the proxy asks with the same tool list on every request of a session.
        """
        key = frozenset(name for name in tool_names if isinstance(name, str))
        chosen = self._detected.get(key)
        if chosen is None:
            if len(self._detected) >= _DETECT_CACHE_SIZE:
                self._detected.clear()
            chosen = self._detected[key] = self._score(key)
        return chosen

    def _score(self, tool_names: frozenset[str]) -> Harness:
        best_score, chosen = 0.0, self._fallback
        for name in sorted(self.harnesses):  # ties go to the first name, whatever the load order
            harness = self.harnesses[name]
            try:
                score = float(harness.detect(tool_names))
            except Exception:
                logger.warning("harness plugin %r failed in detect()", name, exc_info=True)
                continue
            if score > best_score:
                best_score, chosen = score, harness
        return chosen

    def effects(
        self, call: ToolCall, harness: str | Harness | None, ctx: AnalysisContext
    ) -> list[Effect]:
        """``call``'s effects per its harness, falling back to the generic plugin; never raises.

        An unknown harness name is logged (once) and treated as ``None``. A plugin that raises
        (or returns something other than effects) yields one opaque ``exec``, marked
        ``unanalysable="error"``; a call whose JSON arguments did not decode reaches no plugin
        and yields one marked ``unanalysable="arguments"``.
        """
        if call.arguments_error is not None:
            return [_invalid_arguments(call)]
        plugin = self._resolve(harness)
        try:
            effects = plugin.effects(call, ctx)
            if effects is None and plugin is not self._fallback:
                effects = self._fallback.effects(call, ctx)
            return _checked(effects)
        except Exception:
            logger.warning(
                "harness plugin %r failed on tool %r", plugin.name, call.name, exc_info=True
            )
            return [Effect("exec", command=_raw_arguments(call), opaque=True, unanalysable="error")]

    def _resolve(self, harness: str | Harness | None) -> Harness:
        if isinstance(harness, Harness):
            return harness
        if not harness:
            return self._fallback
        try:
            return self.harness(harness)
        except UnknownHarnessError as exc:
            if harness not in self._warned_unknown:
                self._warned_unknown.add(harness)
                logger.warning("%s; using %r", exc, FALLBACK_HARNESS)
            return self._fallback


def load_registry(*, entry_points: bool = True, plugins: Sequence[object] = ()) -> Registry:
    """Register the built-ins, then entry-point plugins, then ``plugins``; build a registry."""
    pm = pluggy.PluginManager(PROJECT_NAME)
    pm.add_hookspecs(safeagents.plugins)
    pm.hook.safeagents_addhooks.call_historic(kwargs={"pluginmanager": pm})
    for module_name in DEFAULT_PLUGINS:
        _register_builtin(pm, module_name)
    if entry_points:
        _load_entry_points(pm)
    for plugin in plugins:
        pm.register(plugin)
    return Registry(pm)


@functools.cache
def default_registry() -> Registry:
    """The registry of all installed plugins, loaded once per process."""
    return load_registry()


def _register_builtin(pm: pluggy.PluginManager, module_name: str) -> None:
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if module_name in OPTIONAL_DEFAULT_PLUGINS and exc.name == module_name:
            logger.warning("optional built-in plugin %s is not installed", module_name)
            return
        raise
    pm.register(module, name=module_name)


def _load_entry_points(pm: pluggy.PluginManager) -> None:
    allowed = os.environ.get(ENV_LOAD_PLUGINS)
    if allowed is None:
        pm.load_setuptools_entrypoints(PROJECT_NAME)
        return
    for name in (part.strip() for part in allowed.split(",")):
        loaded = bool(name) and pm.load_setuptools_entrypoints(PROJECT_NAME, name=name) > 0
        if name and not loaded and not pm.has_plugin(name):
            logger.warning("%s names %r, but no such plugin is installed", ENV_LOAD_PLUGINS, name)


def _collect(
    pm: pluggy.PluginManager, hook_name: str, kind: type[_Named]
) -> list[tuple[_Named, str]]:
    """Every object the hook returns, in registration order, with its plugin's name.

    Implementations are called one by one (wrappers are skipped) so that a conflict or
    a bad return value can name the plugin responsible.
    """
    collected: list[tuple[_Named, str]] = []
    owners: dict[str, str] = {}
    hook: pluggy.HookCaller = getattr(pm.hook, hook_name)
    for impl in hook.get_hookimpls():
        if impl.wrapper or impl.hookwrapper:
            continue
        plugin = impl.plugin_name
        try:
            provided: Any = impl.function()
        except Exception as exc:
            raise PluginError(f"plugin {plugin!r} failed in {hook_name}(): {exc}") from exc
        for item in provided or ():
            if not isinstance(item, kind) or not item.name:
                raise PluginError(
                    f"plugin {plugin!r} returned {item!r} from {hook_name}(); "
                    f"expected {kind.__name__} instances with a non-empty name"
                )
            for key in _names_of(item):
                if key in owners:
                    raise PluginError(
                        f"{kind.__name__.lower()} name {key!r} from plugin {plugin!r} "
                        f"is already provided by plugin {owners[key]!r}"
                    )
                owners[key] = plugin
            collected.append((item, plugin))
    return collected


def _names_of(item: Harness | Detector) -> list[str]:
    aliases = item.aliases if isinstance(item, Harness) else frozenset()
    return list(dict.fromkeys(n.strip().lower() for n in (item.name, *sorted(aliases))))


def _lookup_table(harnesses: list[tuple[Harness, str]]) -> dict[str, Harness]:
    return {key: harness for harness, _ in harnesses for key in _names_of(harness)}


def _checked(effects: object) -> list[Effect]:
    if effects is None:
        return []
    if not isinstance(effects, (list, tuple)) or not all(isinstance(e, Effect) for e in effects):
        raise TypeError(f"effects() must return a list of Effect, got {effects!r:.200}")
    return list(effects)


def _raw_arguments(call: ToolCall) -> str:
    arguments = call.arguments
    if isinstance(arguments, str):
        text = arguments
    else:
        try:
            text = json.dumps(arguments, ensure_ascii=False, default=repr)
        except (TypeError, ValueError, RecursionError):
            text = repr(arguments)
    if len(text) > _RAW_ARGUMENTS_LIMIT:
        text = text[: _RAW_ARGUMENTS_LIMIT - 1] + "…"
    return text


def _invalid_arguments(call: ToolCall) -> Effect:
    """The one effect of a call whose arguments are not valid JSON: nothing can be told."""
    return Effect("exec", command=_raw_arguments(call), opaque=True, unanalysable="arguments")
