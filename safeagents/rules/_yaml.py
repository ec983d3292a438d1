"""YAML loading that remembers the line and column of every node."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from safeagents.rules._errors import RuleError

__all__ = ["Document", "NodePath", "load_document"]

NodePath = tuple[str | int, ...]
_MAX_DEPTH = 64
_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml when available


@dataclass(slots=True)
class Document:
    """Plain data of one YAML file plus the ``(line, col)`` of each value and key."""

    file: str
    data: Any
    values: dict[NodePath, tuple[int, int]] = field(default_factory=dict)
    keys: dict[NodePath, tuple[int, int]] = field(default_factory=dict)
    booleans: dict[NodePath, str] = field(default_factory=dict)
    """How each boolean was spelt (``no``, ``On``): YAML 1.1 reads more words as booleans."""

    def position(self, path: NodePath, *, key: bool = False) -> tuple[int, int]:
        """Where ``path`` is written; the nearest enclosing node when it is not."""
        if key and path in self.keys:
            return self.keys[path]
        while path:
            if path in self.values:
                return self.values[path]
            path = path[:-1]
        return self.values.get((), (1, 1))

    def error(self, path: NodePath, message: str, *, key: bool = False) -> RuleError:
        line, col = self.position(path, key=key)
        return RuleError(self.file, line, col, message)


def load_document(path: Path, display: str | None = None) -> tuple[Document, list[RuleError]]:
    """Parse ``path``; syntax errors raise :class:`RuleError`, duplicate keys are returned."""
    name = display if display is not None else str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise RuleError(name, 0, 0, f"cannot read file: {exc}") from None
    loader = _Loader(text)
    try:
        node = loader.get_single_node()
        builder = _Builder(name, loader)
        data = builder.build(node, ()) if node is not None else None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line, col = (mark.line + 1, mark.column + 1) if mark else (1, 1)
        problem = exc.problem or exc.context or "syntax error"
        raise RuleError(name, line, col, f"invalid YAML: {problem}") from None
    except yaml.YAMLError as exc:
        raise RuleError(name, 1, 1, f"invalid YAML: {exc}") from None
    finally:
        loader.dispose()
    if node is None:
        return Document(name, None, {(): (1, 1)}), []
    return Document(name, data, builder.values, builder.keys, builder.booleans), builder.errors


class _Builder:
    def __init__(self, file: str, loader: Any) -> None:
        self.file = file
        self.loader = loader
        self.values: dict[NodePath, tuple[int, int]] = {}
        self.keys: dict[NodePath, tuple[int, int]] = {}
        self.booleans: dict[NodePath, str] = {}
        self.errors: list[RuleError] = []

    def build(self, node: yaml.Node, path: NodePath) -> Any:
        mark = node.start_mark
        self.values[path] = (mark.line + 1, mark.column + 1)
        if len(path) > _MAX_DEPTH:
            raise yaml.MarkedYAMLError(problem="nesting too deep", problem_mark=mark)
        if isinstance(node, yaml.MappingNode):
            return self._mapping(node, path)
        if isinstance(node, yaml.SequenceNode):
            return [self.build(item, (*path, index)) for index, item in enumerate(node.value)]
        value = self.loader.construct_object(node, deep=True)
        if isinstance(value, bool):
            self.booleans[path] = node.value
        return value

    def _mapping(self, node: yaml.MappingNode, path: NodePath) -> dict[str, Any]:
        result: dict[str, Any] = {}
        for key_node, value_node in node.value:
            key = self.loader.construct_object(key_node, deep=True)
            if not isinstance(key, str) or key_node.tag == "tag:yaml.org,2002:merge":
                raise yaml.MarkedYAMLError(
                    problem=f"keys must be plain text, got {key!r}",
                    problem_mark=key_node.start_mark,
                )
            child = (*path, key)
            key_mark = key_node.start_mark
            if key in result:
                self.errors.append(
                    RuleError(
                        self.file, key_mark.line + 1, key_mark.column + 1, f"duplicate key '{key}'"
                    )
                )
            self.keys[child] = (key_mark.line + 1, key_mark.column + 1)
            result[key] = self.build(value_node, child)
        return result
