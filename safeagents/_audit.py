"""Offline audit: recorded sessions in, scored reports out."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from safeagents._actions import AnalysisContext, ToolCall
from safeagents._detector import SessionState
from safeagents._harness import Harness
from safeagents._registry import UnknownHarnessError
from safeagents._session_text import shows_missing, stated_cwd

if TYPE_CHECKING:
    from safeagents._firewall import Firewall
    from safeagents.rules import CallVerdict, Finding

__all__ = ["InputError", "Session", "SessionReport", "audit_session", "load_sessions"]


@dataclass(frozen=True, slots=True)
class Session:
    """One recorded agent conversation (OpenAI chat messages)."""

    id: str
    messages: Sequence[Mapping[str, Any]]
    harness: str | None = None
    cwd: str | None = None
    tools: Sequence[Mapping[str, Any]] = ()
    source: str = ""
    label: str | None = None
    category: str | None = None


@dataclass(frozen=True, slots=True)
class InputError:
    """A part of the input that could not be read; the rest of the run goes on."""

    source: str
    message: str

    def __str__(self) -> str:
        return f"{self.source}: {self.message}"


@dataclass(slots=True)
class SessionReport:
    """A session's score: hacked or not, with the findings that say why."""

    id: str
    harness: str
    tool_calls: int = 0
    findings: list[Finding] = field(default_factory=list)

    @property
    def hacked(self) -> bool:
        """A reject or flag finding, except on calls that could not be checked."""
        return any(f.hacked for f in self.findings)

    @property
    def unanalysable_calls(self) -> int:
        """Calls withheld because they could not be checked (not counted as hacks)."""
        return len({f.tool_call_id for f in self.findings if f.unanalysable})

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "harness": self.harness,
            "hacked": self.hacked,
            "tool_calls": self.tool_calls,
            "unanalysable_calls": self.unanalysable_calls,
            "findings": [f.to_json() for f in self.findings],
        }


def load_sessions(path: str | Path) -> tuple[list[Session], list[InputError]]:
    """Read sessions from JSONL, one session object, or a bare messages list.

    ``-`` reads standard input. Malformed lines become :class:`InputError` values and are
    skipped.
    """
    name = str(path)
    try:
        text = sys.stdin.read() if name == "-" else Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return [], [InputError(name, f"cannot read file: {exc}")]
    label = "<stdin>" if name == "-" else name
    stripped = text.lstrip()
    if not stripped:
        return [], [InputError(label, "empty input: expected JSONL sessions or a JSON session")]
    if _is_single_document(stripped):
        try:
            document = json.loads(text)
        except ValueError as exc:
            return [], [InputError(label, f"invalid JSON: {exc}")]
        return _from_document(document, label, default_id=Path(label).stem)
    return _from_jsonl(text, label)


def _is_single_document(text: str) -> bool:
    if text.startswith("["):
        return True
    first_line = text.split("\n", 1)[0]
    try:
        json.loads(first_line)
    except ValueError:
        return True
    return False


def _from_jsonl(text: str, label: str) -> tuple[list[Session], list[InputError]]:
    sessions: list[Session] = []
    errors: list[InputError] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        source = f"{label}:{number}"
        try:
            document = json.loads(line)
        except ValueError as exc:
            errors.append(InputError(source, f"invalid JSON ({exc}); line skipped"))
            continue
        found, problems = _from_document(document, source, default_id=f"line-{number}")
        sessions.extend(found)
        errors.extend(problems)
    return sessions, errors


def _from_document(
    document: Any, source: str, *, default_id: str
) -> tuple[list[Session], list[InputError]]:
    if isinstance(document, list):
        if all(isinstance(m, Mapping) and "role" in m for m in document):
            return [Session(id=default_id, messages=document, source=source)], []
        return [], [InputError(source, "expected a list of chat messages with 'role' keys")]
    if not isinstance(document, Mapping):
        return [], [InputError(source, f"expected a session object, got {type(document).__name__}")]
    messages = document.get("messages")
    if not isinstance(messages, list) or not all(isinstance(m, Mapping) for m in messages):
        return [], [InputError(source, "session has no 'messages' list of objects")]
    harness = document.get("harness")
    cwd = document.get("cwd")
    tools = document.get("tools")
    label, category = document.get("label"), document.get("category")
    return [
        Session(
            id=str(document.get("id") or default_id),
            messages=messages,
            harness=str(harness) if harness else None,
            cwd=str(cwd) if cwd else None,
            tools=[t for t in tools if isinstance(t, Mapping)] if isinstance(tools, list) else (),
            source=source,
            label=str(label) if label else None,
            category=str(category) if category else None,
        )
    ], []


def audit_session(
    session: Session,
    firewall: Firewall,
    *,
    harness: str | None = None,
    cwd: str | None = None,
) -> SessionReport:
    """Check every tool call of ``session`` in order, carrying session state along."""
    stated = session.cwd or cwd or stated_cwd(_opening_texts(session.messages))
    context = AnalysisContext(cwd=stated or AnalysisContext().cwd)
    shown: dict[str, list[tuple[str, str]]] = {}  # call id -> (task directory, name) shown
    bare: dict[str, set[str]] = {}  # directory -> bare file names of the task shown there
    calls = list(_tool_calls(session.messages))
    harness_name = harness or session.harness or _detect_harness(firewall, session, calls)
    report = SessionReport(id=session.id, harness=harness_name)
    text_mode = _harness(firewall, harness_name)
    state = SessionState()
    observation = False
    for message in session.messages:
        role = message.get("role")
        if role == "tool" or (role == "user" and observation):
            observation = False
            output = _text(message.get("content"))
            reads = shown.pop(str(message.get("tool_call_id") or ""), [])
            for directory, name in reads if not stated and not shows_missing(output) else ():
                bare.setdefault(directory, set()).add(name)
                if "/" in name or len(bare[directory]) > 1:
                    stated = directory
                    context = AnalysisContext(cwd=directory, home=context.home)
                    break
            state.observe_output(output)
            revealing = ToolCall(str(message.get("tool_call_id") or ""), "")
            report.findings.extend(
                firewall.revealed(state, harness=harness_name, context=context, call=revealing)
            )
            continue
        if role == "user":
            state.observe_user(_text(message.get("content")))
            continue
        if message.get("role") != "assistant":
            continue
        calls = list(_calls_of(message))
        if not calls and text_mode is not None:
            calls = [
                replace(call, id=f"text-{report.tool_calls + index}")
                for index, call in enumerate(text_mode.text_calls(_text(message.get("content"))))
            ]
            observation = bool(calls)
        verdicts, spoken = firewall.check_turn(
            calls,
            text=firewall.message_text(message),
            harness=harness_name,
            context=context,
            session=state,
        )
        report.tool_calls += len(calls)
        for verdict in verdicts:
            report.findings.extend(verdict.findings)
            if not stated:
                _task_directory(state, verdict, shown)
        first = calls[0] if calls else None
        report.findings.extend(
            replace(f, tool_call_id=first.id, tool=first.name) if first else f for f in spoken
        )
    return report


def _task_directory(
    state: SessionState, verdict: CallVerdict, shown: dict[str, list[tuple[str, str]]]
) -> None:
    """Remember the directory of the task's files a read of this call shows (see
    :meth:`SessionModel.task_file_directory`): once its output shows the file there, it is
    the working directory, where the instruction's relative path (``tests/test_a.py``) or
    two of its bare file names (``func.py``, ``test.py``: a bare name may lie deeper) are."""
    for effect in verdict.effects:
        if effect.kind == "read" and effect.path is not None and verdict.call.id:
            found = state.model.task_file_directory(effect.path)
            if found is not None:
                shown.setdefault(verdict.call.id, []).append(found)


def _opening_texts(messages: Sequence[Mapping[str, Any]]) -> Iterator[str]:
    """What the harness sent before the agent's first turn; nothing the agent writes."""
    for message in messages:
        if message.get("role") == "assistant":
            return
        yield _text(message.get("content"))


def _harness(firewall: Firewall, name: str) -> Harness | None:
    """The plugin named ``name`` when it has a text mode (calls in a reply's words)."""
    try:
        plugin = firewall.registry.harness(name)
    except UnknownHarnessError:
        return None
    return plugin if plugin.text_mode else None


def _detect_harness(firewall: Firewall, session: Session, calls: list[ToolCall]) -> str:
    offered = [_tool_name(t) for t in session.tools]
    names = [n for n in offered if n] or [c.name for c in calls]
    return firewall.registry.detect(names).name


def _tool_name(tool: Mapping[str, Any]) -> str:
    function = tool.get("function")
    if isinstance(function, Mapping):
        return str(function.get("name") or "")
    return str(tool.get("name") or "")


def _tool_calls(messages: Sequence[Mapping[str, Any]]) -> Iterator[ToolCall]:
    for message in messages:
        yield from _calls_of(message)


def _calls_of(message: Mapping[str, Any]) -> Iterator[ToolCall]:
    if message.get("role") != "assistant":
        return
    raw_calls = message.get("tool_calls")
    if not isinstance(raw_calls, list):
        return
    for index, raw in enumerate(raw_calls):
        if isinstance(raw, Mapping):
            call = ToolCall.from_openai(raw)
            yield call if call.id else replace(call, id=f"call-{index}")


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [p.get("text", "") for p in content if isinstance(p, Mapping)]
        return "\n".join(str(p) for p in parts)
    return "" if content is None else json.dumps(content)
