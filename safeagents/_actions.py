"""Canonical actions: the one vocabulary every rule speaks.

A harness plugin turns each tool call into a list of :class:`Effect` values. Rules
never see harness tool names unless they ask for them (the ``tool`` and ``harness``
match fields).
"""

from __future__ import annotations

import json
import posixpath
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal

__all__ = [
    "EFFECT_KINDS",
    "UNANALYSABLE_REASONS",
    "AnalysisContext",
    "Effect",
    "EffectKind",
    "ToolCall",
    "normalise_path",
]

EffectKind = Literal["exec", "read", "write", "delete", "move", "network", "search"]
EFFECT_KINDS: tuple[EffectKind, ...] = (
    "exec",
    "read",
    "write",
    "delete",
    "move",
    "network",
    "search",
)

UNANALYSABLE_REASONS = {
    "budget": "run a command too long or too deeply nested to check",
    "error": "run a command the analysers failed on",
    "arguments": "pass arguments that are not valid JSON",
}
"""Why an analysis gave up (:attr:`Effect.unanalysable`), as :meth:`Effect.describe` says it."""


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One tool call as the model emitted it, in any harness's schema.

    ``arguments_error`` says why arguments sent as a JSON string (the OpenAI dialects) did not
    decode; ``arguments`` then holds the raw text, and the call is never analysed as such.
    """

    id: str
    name: str
    arguments: Mapping[str, Any] | str = field(default_factory=dict)
    arguments_error: str | None = None

    @classmethod
    def from_openai(cls, raw: Mapping[str, Any]) -> ToolCall:
        """Build from an OpenAI chat ``tool_calls`` entry; arguments may be a JSON string."""
        function = raw.get("function") or {}
        name = str(function.get("name") or raw.get("name") or "")
        arguments: Any = function.get("arguments", raw.get("arguments", {}))
        error: str | None = None
        if isinstance(arguments, str):
            try:
                decoded = json.loads(arguments) if arguments.strip() else {}
            except ValueError as exc:
                decoded, error = arguments, str(exc)
            except RecursionError:
                decoded, error = arguments, "nested too deeply"
            arguments = decoded
        if not isinstance(arguments, (Mapping, str)):
            arguments = {"value": arguments}
        call_id = str(raw.get("id") or "")
        return cls(id=call_id, name=name, arguments=arguments, arguments_error=error)

    def argument(self, *names: str) -> Any:
        """The first present argument among ``names`` (aliases), else ``None``."""
        if not isinstance(self.arguments, Mapping):
            return None
        for name in names:
            value = self.arguments.get(name)
            if value is not None:
                return value
        return None


@dataclass(frozen=True, slots=True)
class AnalysisContext:
    """Where a call runs: paths are resolved against ``cwd``, ``~`` against ``home``."""

    cwd: str = "/workspace"
    home: str = "/root"

    def resolve(self, path: str) -> str:
        return normalise_path(path, self.cwd, self.home)

    def chdir(self, path: str) -> AnalysisContext:
        return replace(self, cwd=self.resolve(path))


def normalise_path(path: str, cwd: str = "/workspace", home: str = "/root") -> str:
    """Absolute, ``..``-free form of ``path`` so that no spelling evades a rule."""
    path = path.strip()
    if path == "~" or path.startswith("~/"):
        path = home + path[1:]
    elif path.startswith("$HOME") and (len(path) == 5 or path[5] == "/"):
        path = home + path[5:]
    if not path.startswith("/"):
        path = posixpath.join(cwd, path)
    normalised = posixpath.normpath(path)
    if normalised.startswith("//"):
        normalised = "/" + normalised.lstrip("/")
    return normalised


@dataclass(frozen=True, slots=True)
class Effect:
    """One canonical action a tool call would perform.

    Fields not meaningful for a kind stay ``None``/empty. ``path`` and ``dest`` are
    always normalised absolute paths. ``opaque`` marks an ``exec`` whose text could
    not be resolved statically (``$(...)``, decoded pipes into a shell, ``eval $x``).
    ``unanalysable`` (a key of :data:`UNANALYSABLE_REASONS`, on an opaque ``exec``) says that
    the analysis gave up: a budget ran out, an analyser failed, or the arguments were not JSON.
    """

    kind: EffectKind
    path: str | None = None
    dest: str | None = None
    content: str | None = None
    added: str | None = None
    removed: str | None = None
    new_file: bool = False
    argv0: str | None = None
    argv: tuple[str, ...] = ()
    command: str | None = None
    url: str | None = None
    host: str | None = None
    pattern: str | None = None
    opaque: bool = False
    unanalysable: str | None = None

    def describe(self) -> str:
        """A short human phrase: ``delete /workspace/tests/test_x.py``."""
        target = self.path or self.url or self.command or self.pattern or ""
        if self.kind == "move" and self.dest:
            target = f"{self.path} -> {self.dest}"
        if self.unanalysable is not None:
            phrase = UNANALYSABLE_REASONS.get(self.unanalysable, "run an unanalysable command")
            return f"{phrase} ({_clip(target, 60)})"
        if self.kind == "exec" and self.opaque:
            return f"run an unresolvable command {_clip(target)}"
        return f"{self.kind} {_clip(target)}".strip()


def _clip(text: str, limit: int = 120) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
