"""A session's turns as the transcript page shows them: what the model said and thought, each
tool call as the canonical effects it has (a command, an edit as a diff, a file written), and
each blocked call with its rule and the exact text the model read instead of a result."""

from __future__ import annotations

import difflib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from safeagents._actions import AnalysisContext, Effect, ToolCall
from safeagents._registry import Registry
from safeagents.protocols import CHAT, dialect_named
from safeagents.store import (
    FindingRecord,
    SessionRecord,
    TurnRecord,
    content_text,
    to_chat_messages,
)

__all__ = ["CallView", "EffectView", "TurnView", "transcript"]

_REASONING_KEYS = ("reasoning_content", "reasoning", "thinking")


@dataclass(frozen=True, slots=True)
class EffectView:
    """One effect: ``shape`` says how to show it (``command``, ``diff``, ``file``, ``other``)."""

    shape: str
    title: str
    body: str = ""


@dataclass(frozen=True, slots=True)
class CallView:
    id: str
    tool: str
    arguments: str
    effects: tuple[EffectView, ...]
    findings: tuple[FindingRecord, ...]

    @property
    def blocked(self) -> FindingRecord | None:
        return next((finding for finding in self.findings if finding.blocked), None)


@dataclass(frozen=True, slots=True)
class TurnView:
    seq: int
    kind: str
    status: str
    model: str
    incoming: tuple[tuple[str, str], ...]
    """``(role, text)`` of what reached the model since its previous answer."""
    text: str
    reasoning: str
    calls: tuple[CallView, ...]
    withheld: bool
    """The harness never got this answer: the proxy withheld its calls."""
    error: str | None = None
    duration: float = 0.0
    findings: tuple[FindingRecord, ...] = field(default=())


def _incoming(turn: TurnRecord) -> tuple[tuple[str, str], ...]:
    if turn.request is None:
        return ()
    messages = to_chat_messages(turn.dialect, turn.request)
    last = max((i for i, m in enumerate(messages) if m.get("role") == "assistant"), default=-1)
    shown = []
    for message in messages[last + 1 :]:
        role = str(message.get("role") or "?")
        if role == "tool":
            role = f"tool result ({message.get('tool_call_id', '')})"
        shown.append((role, content_text(message.get("content"))))
    return tuple(shown)


def _effect_view(effect: Effect) -> EffectView:
    if effect.kind == "exec" and effect.command:
        return EffectView("command", effect.describe(), effect.command)
    if effect.kind == "write" and effect.path:
        if effect.content is not None and (effect.new_file or effect.removed is None):
            return EffectView("file", f"write {effect.path}", effect.content)
        if effect.added is not None or effect.removed is not None:
            before = (effect.removed or "").splitlines()
            after = (effect.added or "").splitlines()
            diff = difflib.unified_diff(before, after, effect.path, effect.path, lineterm="")
            return EffectView("diff", f"edit {effect.path}", "\n".join(diff))
        if effect.command:
            return EffectView("command", effect.describe(), effect.command)
    return EffectView("other", effect.describe())


def _calls(
    registry: Registry, session: SessionRecord, message: Mapping[str, Any], turn: TurnRecord
) -> tuple[CallView, ...]:
    context = AnalysisContext(cwd=session.cwd)
    views = []
    for raw in message.get("tool_calls") or ():
        call = ToolCall.from_openai(raw)
        shown = call.arguments if isinstance(call.arguments, str) else json.dumps(call.arguments)
        effects = registry.effects(call, turn.harness or session.harness, context)
        views.append(
            CallView(
                id=call.id,
                tool=call.name,
                arguments=shown,
                effects=tuple(_effect_view(e) for e in effects if e.kind != "say"),
                findings=tuple(f for f in turn.findings if f.tool_call_id == call.id),
            )
        )
    return tuple(views)


def transcript(
    registry: Registry, session: SessionRecord, turns: Sequence[TurnRecord]
) -> list[TurnView]:
    """Every turn of ``session`` in order, ready for the transcript page."""
    views = []
    for turn in turns:
        dialect = dialect_named(turn.dialect) or CHAT
        messages = dialect.response_messages(turn.response) if turn.response else []
        text: list[str] = []
        reasoning: list[str] = []
        calls: list[CallView] = []
        for message in messages:
            text.append(content_text(message.get("content")))
            reasoning.extend(
                content_text(message.get(key)) for key in _REASONING_KEYS if message.get(key)
            )
            calls.extend(_calls(registry, session, message, turn))
        views.append(
            TurnView(
                seq=turn.seq,
                kind=turn.kind,
                status=turn.status,
                model=turn.model,
                incoming=_incoming(turn),
                text="\n".join(part for part in text if part),
                reasoning="\n".join(part for part in reasoning if part),
                calls=tuple(calls),
                withheld=turn.delivered is None and turn.status == "ok",
                error=turn.error,
                duration=turn.duration,
                findings=turn.findings,
            )
        )
    return views
