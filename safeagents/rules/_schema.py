"""The shape of ``pack.yaml``, rule files and fixture files, as pydantic models."""

from __future__ import annotations

from typing import Any, Literal, TypeVar, get_args, get_origin

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from safeagents.rules._errors import RuleError, did_you_mean
from safeagents.rules._yaml import Document, NodePath

__all__ = [
    "ACTIONS",
    "CATEGORIES",
    "EXPECTATIONS",
    "SEVERITIES",
    "Action",
    "Category",
    "Expectation",
    "FixtureCaseModel",
    "FixtureFileModel",
    "PackModel",
    "RuleModel",
    "Severity",
    "show",
    "validate",
]

Severity = Literal["info", "low", "medium", "high", "critical"]
Action = Literal["reject", "flag", "warn"]
Category = Literal[
    "test-tampering",
    "test-skipping",
    "report-forging",
    "early-exit",
    "always-equal",
    "state-toggle",
    "special-casing",
    "introspection",
    "oracle-access",
    "git-history",
    "solution-download",
    "grader-tampering",
    "timer-killing",
    "output-spoofing",
    "destructive",
    "secrets",
    "unanalysable",
    "other",
]
Expectation = Literal["match", "ok", "todo-match", "todo-ok"]
SEVERITIES: tuple[str, ...] = get_args(Severity)
ACTIONS: tuple[str, ...] = get_args(Action)
CATEGORIES: tuple[str, ...] = get_args(Category)
EXPECTATIONS: tuple[str, ...] = get_args(Expectation)


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class PackModel(_Strict):
    name: str
    description: str = ""
    vars: dict[str, Any] = Field(default_factory=dict)
    lists: dict[str, Any] = Field(default_factory=dict)
    macros: dict[str, Any] = Field(default_factory=dict)


class ExceptionModel(_Strict):
    name: str
    match: Any


class RuleModel(_Strict):
    id: str
    category: Category
    severity: Severity
    action: Action
    enabled: bool = True
    description: str
    match: Any
    exceptions: list[ExceptionModel] = Field(default_factory=list)
    message: str


class HistoryEntryModel(_Strict):
    tool: str
    arguments: Any = Field(default_factory=dict)
    output: str = ""


class FixtureCaseModel(_Strict):
    name: str
    harness: str
    tool: str = ""
    """Empty: the turn makes no tool call, only says ``text``."""
    text: str = ""
    """What the model says in the same turn (content and reasoning)."""
    arguments: Any = Field(default_factory=dict)
    arguments_json: str | None = None
    """The arguments as the OpenAI dialects carry them (a JSON string), decoded like them."""
    expect: Expectation
    cwd: str = "/workspace"
    vars: dict[str, Any] = Field(default_factory=dict)
    instruction: str = ""
    """The task's instruction (the session's user message before any call)."""
    history: list[HistoryEntryModel] = Field(default_factory=list)
    said_before: list[str] = Field(default_factory=list)
    """What the model said in earlier turns, one text per turn, before ``history``."""


class FixtureFileModel(_Strict):
    cases: list[FixtureCaseModel]


ModelT = TypeVar("ModelT", bound=BaseModel)


def validate(model: type[ModelT], document: Document) -> tuple[ModelT | None, list[RuleError]]:
    """Validate ``document.data``; pydantic errors come back at their YAML positions."""
    try:
        return model.model_validate(document.data), []
    except ValidationError as exc:
        errors = exc.errors(include_url=False)
        return None, [_convert(model, document, dict(error)) for error in errors]


def show(value: Any) -> str:
    """A value as the rule author wrote it: ``'urgent'``, ``null``, ``true``, ``a list``."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return repr(value)
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return f"{type(value).__name__} {value!r}"


def _convert(model: type[BaseModel], document: Document, error: dict[str, Any]) -> RuleError:
    loc: NodePath = tuple(error["loc"])
    kind: str = error["type"]
    value = error.get("input")
    label = _label(loc)
    if kind == "extra_forbidden":
        key = str(loc[-1])
        allowed = _keys_of(_annotation_at(model, loc[:-1]))
        hint = did_you_mean(key, allowed) or f" (expected one of {', '.join(allowed)})"
        return document.error(loc, f"unknown field '{key}'{hint}", key=True)
    if kind == "missing":
        where = f" in {_label(loc[:-1])}" if loc[:-1] else ""
        return document.error(loc[:-1], f"missing required field '{loc[-1]}'{where}")
    if kind == "literal_error":
        choices = ", ".join(str(c) for c in get_args(_annotation_at(model, loc)))
        return document.error(loc, f"{label}: expected one of {choices}, got {show(value)}")
    expected = {
        "string_type": "text",
        "bool_type": "true or false",
        "list_type": "a list",
        "dict_type": "a mapping",
        "model_type": "a mapping",
        "model_attributes_type": "a mapping",
    }.get(kind)
    if expected is not None:
        prefix = f"{label}: " if label else ""
        message = f"{prefix}expected {expected}, got {show(value)}"
        spelt = document.booleans.get(loc)
        if kind == "string_type" and spelt is not None:
            message += f" (YAML reads an unquoted {spelt} as a boolean; quote it: '{spelt}')"
        return document.error(loc, message)
    return document.error(loc, f"{label}: {error['msg']}" if label else str(error["msg"]))


def _label(loc: NodePath) -> str:
    text = ""
    for step in loc:
        text += f"[{step}]" if isinstance(step, int) else (f".{step}" if text else step)
    return text


def _annotation_at(model: type[BaseModel], loc: NodePath) -> Any:
    annotation: Any = model
    for step in loc:
        origin = get_origin(annotation)
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            field = annotation.model_fields.get(str(step))
            if field is None:
                return None
            annotation = field.annotation
        elif origin is list and isinstance(step, int):
            annotation = get_args(annotation)[0]
        elif origin is dict:
            annotation = get_args(annotation)[1]
        else:
            return None
    return annotation


def _keys_of(annotation: Any) -> list[str]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return list(annotation.model_fields)
    return []
