"""Effects of Python snippets an agent runs (``python -c``, heredocs, a harness' code tool)."""

from __future__ import annotations

import ast
import re
import warnings
from collections.abc import Mapping
from dataclasses import replace

from safeagents._actions import AnalysisContext, Effect
from safeagents.analysis._python._calls import OPEN_FUNCTIONS, CallEffects
from safeagents.analysis._python._resolve import Resolver
from safeagents.analysis._python._site import NO_TOOLS, PythonTool, opaque_python

__all__ = ["analyze_python"]

MAX_CODE_CHARS = 1_000_000
"""Longer snippets are not analysed: they yield one opaque exec."""
MAX_NODES = 100_000
"""AST nodes visited per snippet; the rest of a bigger snippet is reported as opaque."""
MAX_NESTING = 4
"""How deep ``exec("...")`` inside analysed code is followed."""
COMMAND_CLIP = 2000


def analyze_python(
    code: str, ctx: AnalysisContext, *, tools: Mapping[str, PythonTool] = NO_TOOLS
) -> list[Effect]:
    """Effects of running ``code``; the first is always an ``exec`` of ``python`` itself.

    ``tools`` maps qualified names of extra callables (a harness' tool API, such as
    ``hermes_tools.write_file``) to the effects of a call; they apply to ``code`` and the
    ``exec``'d strings in it, not to Python that ``code`` starts as a process.
    """
    return _analyze(code, ctx, 0, tools)


def _analyze(
    code: str, ctx: AnalysisContext, nesting: int, tools: Mapping[str, PythonTool]
) -> list[Effect]:
    if not isinstance(code, str):
        return []
    head = Effect("exec", argv0="python", command=code[:COMMAND_CLIP])
    if len(code) > MAX_CODE_CHARS or nesting > MAX_NESTING:
        return [replace(head, opaque=True, unanalysable="budget")]
    tree = _parse(code)
    if not isinstance(tree, ast.Module):
        return [replace(head, opaque=True, unanalysable=tree)]
    try:
        effects = _walk(code, tree, ctx, nesting, tools)
    except (RecursionError, MemoryError):
        effects = [_gave_up(code)]
    return list(dict.fromkeys([head, *effects]))


def _parse(code: str) -> ast.Module | str | None:
    """The tree; else ``None`` for code Python would refuse too, or ``"budget"``."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return ast.parse(code)
    except SyntaxError as exc:
        return "budget" if _TOO_COMPLEX.search(str(exc.msg)) else None
    except (RecursionError, MemoryError):
        return "budget"
    except (ValueError, OverflowError):
        return None


_TOO_COMPLEX = re.compile(r"too many|too complex|too deeply|nesting|recursion", re.IGNORECASE)
"""Syntax errors that are limits of the parser (5,000 nested parentheses), not bad code."""


def _gave_up(code: str) -> Effect:
    return replace(opaque_python(code[:COMMAND_CLIP]), unanalysable="budget")


def _walk(
    code: str,
    tree: ast.Module,
    ctx: AnalysisContext,
    nesting: int,
    tools: Mapping[str, PythonTool],
) -> list[Effect]:
    """Visit nodes in source order (iteratively, within the node budget)."""
    resolver = Resolver(tree, MAX_NODES)

    def analyse_nested(text: str, nested_ctx: AnalysisContext) -> list[Effect]:
        return _analyze(text, nested_ctx, nesting + 1, tools)

    calls = CallEffects(code, resolver, ctx, analyse_nested, tools)
    stack: list[ast.AST] = [tree]
    visited = 0
    while stack:
        node = stack.pop()
        visited += 1
        if visited > MAX_NODES:
            calls.effects.append(_gave_up(code))
            break
        if isinstance(node, (ast.With, ast.AsyncWith)):
            _note_with_writes(node, resolver, calls)
        elif isinstance(node, ast.Call):
            _note_chained_write(node, resolver, calls)
            _note_replacement(node, resolver, calls)
            calls.call(node)
        stack.extend(reversed(list(ast.iter_child_nodes(node))))
    if resolver.truncated and not any(effect.unanalysable for effect in calls.effects):
        calls.effects.append(_gave_up(code))
    return calls.effects


def _is_open_call(node: ast.AST, resolver: Resolver) -> bool:
    if not isinstance(node, ast.Call):
        return False
    if isinstance(node.func, ast.Attribute) and node.func.attr == "open":
        return True
    return resolver.qualname(node.func) in OPEN_FUNCTIONS


def _note_with_writes(
    node: ast.With | ast.AsyncWith, resolver: Resolver, calls: CallEffects
) -> None:
    """``with open(p, 'w') as f: f.write('...')``: remember the literal text written."""
    for item in node.items:
        handle = item.optional_vars
        if not isinstance(handle, ast.Name) or not _is_open_call(item.context_expr, resolver):
            continue
        pieces: list[str] = []
        for statement in node.body:
            writes, written = _literal_write(statement, handle.id, resolver)
            if not writes:
                continue
            if written is None:
                pieces = []
                break
            pieces.append(written)
        if pieces:
            calls.write_contents[id(item.context_expr)] = "".join(pieces)


def _literal_write(statement: ast.stmt, handle: str, resolver: Resolver) -> tuple[bool, str | None]:
    """Whether ``statement`` writes to ``handle``, and the text when it is literal."""
    if not isinstance(statement, ast.Expr) or not isinstance(statement.value, ast.Call):
        return False, None
    call = statement.value
    func = call.func
    if not (
        isinstance(func, ast.Attribute)
        and func.attr in ("write", "writelines")
        and isinstance(func.value, ast.Name)
        and func.value.id == handle
        and len(call.args) == 1
    ):
        return False, None
    argument = call.args[0]
    if func.attr == "write":
        return True, resolver.single_text(argument)
    if not isinstance(argument, (ast.List, ast.Tuple)):
        return True, None
    parts = [resolver.single_text(element) for element in argument.elts]
    if any(part is None for part in parts):
        return True, None
    return True, "".join(part for part in parts if part)


def _note_chained_write(node: ast.Call, resolver: Resolver, calls: CallEffects) -> None:
    """``open(p, 'w').write('...')``: the outer call is visited before the inner one."""
    func = node.func
    if (
        isinstance(func, ast.Attribute)
        and func.attr == "write"
        and len(node.args) == 1
        and _is_open_call(func.value, resolver)
    ):
        calls.write_contents[id(func.value)] = resolver.single_text(node.args[0])


def _note_replacement(node: ast.Call, resolver: Resolver, calls: CallEffects) -> None:
    """``text.replace(old, new)``, ``re.sub(pattern, new, text)``: remember the literal
    ``new``, what a script that rewrites a file this way adds to it."""
    func, arguments = node.func, len(node.args)
    method = isinstance(func, ast.Attribute) and func.attr == "replace" and arguments >= 2
    if not method and not (arguments >= 3 and _may_be_re_sub(func, resolver)):
        return
    text = resolver.single_text(node.args[1])
    if text and text.strip():
        calls.replacements.append(text)


def _may_be_re_sub(func: ast.expr, resolver: Resolver) -> bool:
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
    return name in ("sub", "subn") and resolver.qualname(func) in ("re.sub", "re.subn")
