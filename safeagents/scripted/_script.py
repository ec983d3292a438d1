"""Scripts: the list of steps a scripted model replays, and which step answers a request."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

__all__ = [
    "Action",
    "Script",
    "ScriptError",
    "Shell",
    "Step",
    "Tool",
    "Write",
]


class ScriptError(ValueError):
    """A script (or one of its steps) is malformed."""


@dataclass(frozen=True, slots=True)
class Shell:
    """Run ``command`` with whatever shell tool the harness offers."""

    command: str


@dataclass(frozen=True, slots=True)
class Write:
    """Write ``content`` to ``path`` with the harness's write tool (or patch, or a heredoc)."""

    path: str
    content: str


@dataclass(frozen=True, slots=True)
class Tool:
    """Call tool ``name`` verbatim; a string ``arguments`` is the input of a freeform tool."""

    name: str
    arguments: Mapping[str, Any] | str


Action = Shell | Write | Tool


@dataclass(frozen=True, slots=True)
class Step:
    """One model turn: optional text, then zero or more tool calls (none = final answer)."""

    actions: tuple[Action, ...] = ()
    text: str | None = None
    thinking: str | None = None
    """Reasoning before the answer (``think``; chat completions carry it as ``reasoning``)."""

    @property
    def is_final(self) -> bool:
        return not self.actions


def _parse_action(raw: Mapping[str, Any], where: str) -> Action:
    if "shell" in raw:
        command = raw["shell"]
        if not isinstance(command, str):
            raise ScriptError(f"{where}: 'shell' must be a string command")
        return Shell(command)
    if "write" in raw:
        spec = raw["write"]
        if not isinstance(spec, Mapping) or not isinstance(spec.get("path"), str):
            raise ScriptError(f"{where}: 'write' needs {{path: str, content: str}}")
        content = spec.get("content", "")
        if not isinstance(content, str):
            raise ScriptError(f"{where}: 'write.content' must be a string")
        return Write(spec["path"], content)
    if "tool" in raw:
        name = raw["tool"]
        arguments = raw.get("arguments", {})
        if not isinstance(name, str) or not isinstance(arguments, (Mapping, str)):
            raise ScriptError(f"{where}: 'tool' needs a name and object (or string) 'arguments'")
        return Tool(name, dict(arguments) if isinstance(arguments, Mapping) else arguments)
    raise ScriptError(f"{where}: expected one of 'say', 'shell', 'write', 'tool', 'parallel'")


def parse_step(raw: Mapping[str, Any] | str, where: str = "step") -> Step:
    """Parse ``{"say": ...}``, ``{"shell": ...}``, ``{"write": ...}``, ``{"tool": ...}`` or
    ``{"parallel": [actions...]}``; a step with an action may also carry ``say`` as preamble,
    and any step ``think`` (its reasoning)."""
    if isinstance(raw, str):
        return Step(text=raw)
    if not isinstance(raw, Mapping):
        raise ScriptError(f"{where}: a step must be a mapping, got {type(raw).__name__}")
    text = raw.get("say")
    if text is not None and not isinstance(text, str):
        raise ScriptError(f"{where}: 'say' must be a string")
    thinking = raw.get("think")
    if thinking is not None and not isinstance(thinking, str):
        raise ScriptError(f"{where}: 'think' must be a string")
    raw = {key: value for key, value in raw.items() if key != "think"}
    if "parallel" in raw:
        entries = raw["parallel"]
        if not isinstance(entries, Sequence) or isinstance(entries, str) or not entries:
            raise ScriptError(f"{where}: 'parallel' must be a non-empty list of actions")
        actions = tuple(
            _parse_action(entry, f"{where}.parallel[{index}]")
            if isinstance(entry, Mapping)
            else _raise_not_mapping(f"{where}.parallel[{index}]")
            for index, entry in enumerate(entries)
        )
        return Step(actions, text, thinking)
    if set(raw) == {"say"} or (thinking is not None and set(raw) <= {"say"}):
        return Step(text=text, thinking=thinking)
    return Step((_parse_action(raw, where),), text, thinking)


def _raise_not_mapping(where: str) -> Action:
    raise ScriptError(f"{where}: an action must be a mapping")


@dataclass(frozen=True, slots=True)
class Script:
    """An ordered list of steps; a request is answered by the step its tool results point at."""

    steps: tuple[Step, ...]
    finished_text: str = "The scripted session is over."
    side_text: str = "Scripted reply"
    text_mode: bool = False
    """A request without tools is answered in mini-swe-agent's text mode: the step its
    assistant turns point at, its commands written as fenced ``bash`` blocks."""

    @classmethod
    def from_data(cls, data: Sequence[Mapping[str, Any] | str] | Mapping[str, Any]) -> Script:
        """Build from a list of steps, or a mapping ``{steps: [...], finished_text, side_text,
        text_mode}``."""
        options: Mapping[str, Any] = {}
        if isinstance(data, Mapping):
            options = data
            data = data.get("steps", [])
        if isinstance(data, str) or not isinstance(data, Sequence):
            raise ScriptError("a script is a list of steps")
        steps = tuple(parse_step(raw, f"steps[{index}]") for index, raw in enumerate(data))
        extra = {key: str(options[key]) for key in ("finished_text", "side_text") if key in options}
        return cls(steps, **extra, text_mode=bool(options.get("text_mode")))

    @classmethod
    def load(cls, path: str | Path) -> Script:
        """Load a script from a YAML or JSON file."""
        text = Path(path).read_text(encoding="utf-8")
        data = json.loads(text) if str(path).endswith(".json") else yaml.safe_load(text)
        return cls.from_data(data)

    def step_at(self, tool_results: int) -> tuple[int, Step]:
        """The step answering a conversation holding ``tool_results`` tool results.

        Step ``i`` starts once the calls of all earlier steps have results, so a proxy
        that withholds a call and appends its own rejection moves the script along.
        Past the end, the answer is a final text (index ``len(steps)``).
        """
        start = 0
        for index, step in enumerate(self.steps):
            if start >= tool_results:
                return index, step
            start += len(step.actions)
        return len(self.steps), Step(text=self.finished_text)

    def text_step_at(self, replies: int) -> tuple[int, Step]:
        """The step answering a text-mode conversation holding ``replies`` assistant turns
        (a proxy's hidden re-ask turn moves the script along too)."""
        if replies < len(self.steps):
            return replies, self.steps[replies]
        return len(self.steps), Step(text=self.finished_text)
