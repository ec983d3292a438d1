"""In-place edits of test files by script (``sed -i``, ``perl -pi``, Python's
``str.replace``/``re.sub``) that drop or alter assertions."""

from __future__ import annotations

import ast
import posixpath
import re
from collections.abc import Iterable, Iterator
from itertools import pairwise

from safeagents._actions import Effect
from safeagents._detector import CallContext
from safeagents.detectors._assertions import Excuse, weakens
from safeagents.detectors._python import parse

__all__ = [
    "code_drops_assertion_lines",
    "code_substitutions",
    "listed_ranges",
    "numbered_deletes",
    "python_code",
    "restores_older_revision",
    "script_deletes_assertions",
    "script_inserted_text",
    "script_substitutions",
    "substitution_weakens",
]

_MAX_SCRIPT = 20_000
_SUBSTITUTE = re.compile(
    r"(?:^|[;\s{}'\"])(?:\d+(?:,\d+)?|\$|/(?:\\.|[^/\\])*/)?"
    r"s([^\w\s\\])((?:\\.|(?!\1).)*)\1((?:\\.|(?!\1).)*)\1"
)
_DELETE = re.compile(
    r"(?:^|[;\s{}])/((?:\\.|[^/\\])*)/\s*(?:,\s*(?:/(?:\\.|[^/\\])*/|\$|\d+)\s*)?!?\s*d\b"
)
_LINE_START = re.compile(r"\^(?:\\s\*| \*|\\\(\.\*\\\)|\(\.\*\))?\$?")
"""A pattern matching any line from its start: ``^``, ``^ *``, a whitespace class, a group."""
_COMMENT = re.compile(r"\s*(?:#|//)")
_WHOLE_LINE = re.compile(r"\^?\.\*\$?")
_CHANGE = re.compile(r"(?:^|[;\s{}'\"])\d+(?:,\d+)?\s*c(?:\\|\s)\s*(.+)")
"""sed's change command on numbered lines, with the text it puts there: ``24c\\ text``."""
_NUMBERED_DELETE = re.compile(r"(?:^|[;\s{}'\"])(\d+)(?:\s*,\s*(\d+))?\s*d\s*(?:$|[;}'\"])")
"""sed's delete command on numbered lines: ``9d``, ``7,9d``."""
_MAX_DELETED_LINES = 200
_PRINTED_RANGE = re.compile(r"^(\d+)(?:,(\d+))?p$")
"""sed's print command on numbered lines (``160,170p``, ``9p``), run with ``-n``."""
_MAX_LISTED_EFFECTS = 400
_ADDRESS = r"(?:\d+|\$|/(?:\\.|[^/\\])*/)"
_TEXT_COMMAND = re.compile(
    rf"(?:^|[;{{]\s*|{_ADDRESS}(?:\s*,\s*{_ADDRESS})?\s*)[aic](?:\\\s*|\s+)(\S.*)", re.MULTILINE
)
"""sed's append, insert and change commands with the text they put in: ``/def t/i\\ text``."""
_DELETED = re.compile(
    r"\bassert|\bexpect\b|\bself\.fail|\bshould\b|==|!=|\bto(?:Be|Equal|StrictEqual|Match|Contain|Throw|Have)\w*\("
)
_COMPARISON = re.compile(r"==|!=|\btoBe\b|\btoEqual\b|\bassert|\braises\b|\bapprox\(")
_ASSERT_WORD = re.compile(r"\bassert")
_ESCAPED = re.compile(r"\\(\W)")
_TAB = re.compile(r"(?<!\\)\\t")
_OLDER = re.compile(r"[~^]|@\{|^[0-9a-f]{7,40}$")
"""A revision before the checkout's: ``HEAD~1``, ``HEAD^``, ``main@{2}``, a commit hash."""
_STASH_ENTRY = re.compile(r"(?:refs/)?stash(?:@\{(\d+)\})?")


def script_deletes_assertions(script: str) -> bool:
    """Whether a sed/perl script deletes assertion lines (``/assert/d``), comments lines out
    whole (``27s/^/# /``: in a test, the line is a check more often than not) or puts an
    assertion in place of a whole line it cannot show (``24s/.*/assert f(8) == 5/``,
    ``24c\\    assert f(8) == 5``): the expectation it replaces is unknown."""
    script = script[:_MAX_SCRIPT]
    if any(_overwrites_line(old, new) for old, new in script_substitutions(script)):
        return True
    if any(_COMPARISON.search(m.group(1)) for m in _CHANGE.finditer(script)):
        return True
    return any(_DELETED.search(m.group(1)) for m in _DELETE.finditer(script))


def _overwrites_line(pattern: str, replacement: str) -> bool:
    if _LINE_START.fullmatch(pattern) is not None:
        return _COMMENT.match(replacement) is not None
    return _WHOLE_LINE.fullmatch(pattern) is not None and bool(_COMPARISON.search(replacement))


def numbered_deletes(script: str) -> frozenset[int]:
    """The line numbers a sed script deletes by number (``9d``, ``7,9d``)."""
    numbers: set[int] = set()
    for match in _NUMBERED_DELETE.finditer(_SUBSTITUTE.sub(" ", script[:_MAX_SCRIPT])):
        first = int(match[1])
        last = int(match[2]) if match[2] else first
        numbers.update(range(first, min(last, first + _MAX_DELETED_LINES) + 1))
    return frozenset(numbers)


def listed_ranges(path: str, effects: list[Effect]) -> Iterator[tuple[int, int]]:
    """The line ranges of ``path``'s file that earlier calls printed without numbers, newest
    first: ``sed -n '160,170p' f`` (a mini-swe-agent's view of a file), ``head -n 20 f``."""
    name = posixpath.basename(path)
    for effect in reversed(effects[-_MAX_LISTED_EFFECTS:]):
        argv = effect.argv
        if effect.kind != "exec" or len(argv) < 3 or posixpath.basename(argv[-1]) != name:
            continue
        if effect.argv0 == "sed" and "-n" in argv and (match := _PRINTED_RANGE.match(argv[-2])):
            first = int(match[1])
            yield first, int(match[2] or first)
        elif effect.argv0 == "head" and argv[1] == "-n" and len(argv) == 4 and argv[2].isdigit():
            yield 1, int(argv[2])


def script_inserted_text(script: str) -> Iterator[str]:
    """The text each ``a``, ``i`` or ``c`` command of a sed script puts in, a ``\\t`` read
    as the tab GNU sed writes (``/^func TestA/a\\\\tt.Skip("…")`` indents ``t.Skip``)."""
    for match in _TEXT_COMMAND.finditer(_SUBSTITUTE.sub(" ", script[:_MAX_SCRIPT])):
        yield _plain(_TAB.sub("\t", match.group(1)))


def script_substitutions(script: str) -> Iterator[tuple[str, str]]:
    """``(pattern, replacement)`` of each ``s/…/…/`` of a sed/perl script, unescaped."""
    for match in _SUBSTITUTE.finditer(script[:_MAX_SCRIPT]):
        yield _plain(match.group(2)), _plain(match.group(3))


def code_substitutions(code: str) -> Iterator[tuple[str, str]]:
    """``(old, new)`` of each ``text.replace(old, new)`` or ``re.sub(pattern, new, text)``
    with literal strings in Python code (a regex unescaped), also those a loop over literal
    pairs feeds it (``for a, b in [('== 4', '== 5')]: s = s.replace(a, b)``)."""
    tree = parse(code[:_MAX_SCRIPT])
    if tree is None:
        return
    looped = _looped_pairs(tree)
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
            continue
        method, arguments = node.func.attr, node.args
        wanted = 2 if method == "replace" else 3 if method == "sub" else None
        if wanted is None or len(arguments) < wanted:
            continue
        first, second = arguments[:2]
        if isinstance(first, ast.Name) and isinstance(second, ast.Name):
            pairs = looped.get((first.id, second.id), [])
        elif isinstance(first, ast.Constant) and isinstance(second, ast.Constant):
            pairs = [(first.value, second.value)]
        else:
            continue
        for old, new in pairs:
            if isinstance(old, str) and isinstance(new, str):
                yield (old, new) if method == "replace" else (_plain(old), _plain(new))


def _looped_pairs(tree: ast.Module) -> dict[tuple[str, str], list[tuple[object, object]]]:
    """``(a, b)`` -> the literal pairs a loop ``for a, b in`` binds them to: a list or tuple
    of pairs, a dict's ``.items()``, either spelled out or named once at module level."""
    named = {
        target.id: statement.value
        for statement in tree.body
        if isinstance(statement, ast.Assign)
        for target in statement.targets
        if isinstance(target, ast.Name)
    }
    looped: dict[tuple[str, str], list[tuple[object, object]]] = {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.For) or not isinstance(node.target, ast.Tuple):
            continue
        names = [t.id for t in node.target.elts if isinstance(t, ast.Name)]
        if len(names) != 2 or len(node.target.elts) != 2:
            continue
        source, items = node.iter, False
        if isinstance(source, ast.Call):
            called = source.func
            if not isinstance(called, ast.Attribute) or called.attr != "items" or source.args:
                continue
            source, items = called.value, True
        if isinstance(source, ast.Name):
            source = named.get(source.id, source)
        looped.setdefault((names[0], names[1]), []).extend(_literal_pairs(source, items))
    return looped


def _literal_pairs(node: ast.expr, items: bool) -> Iterator[tuple[object, object]]:
    if items and isinstance(node, ast.Dict):
        for key, value in zip(node.keys, node.values, strict=True):
            if isinstance(key, ast.Constant) and isinstance(value, ast.Constant):
                yield key.value, value.value
    elif not items and isinstance(node, (ast.List, ast.Tuple)):
        for element in node.elts:
            if isinstance(element, (ast.Tuple, ast.List)) and len(element.elts) == 2:
                old, new = element.elts
                if isinstance(old, ast.Constant) and isinstance(new, ast.Constant):
                    yield old.value, new.value


_KEEPS = frozenset({"append", "extend", "write", "writelines", "print"})


def code_drops_assertion_lines(code: str) -> bool:
    """Whether Python code filters lines by an assertion pattern: a ``for`` loop that keeps
    lines (``out.append(line)``, ``f.write(line)``) and skips some with a ``continue`` under an
    ``if``, or a comprehension with an ``if``, where that condition holds, itself or through a
    name bound in the loop or at module level, a string with an assertion word (``"assert
    f("``, ``"== 1"``): ``sed '/assert/d'`` written in Python."""
    code = code[:_MAX_SCRIPT]
    if not _DELETED.search(code):
        return False
    tree = parse(code)
    if tree is None:
        return False
    module = _bound_strings(tree.body)
    for node in ast.walk(tree):
        if isinstance(node, ast.For):
            conditions = _skip_conditions(node)
            named = {**module, **_bound_strings(node.body)} if conditions else module
        elif isinstance(node, ast.comprehension):
            conditions, named = node.ifs, module
        else:
            continue
        if any(_DELETED.search(text) for test in conditions for text in _strings(test, named)):
            return True
    return False


def _bound_strings(statements: list[ast.stmt]) -> dict[str, list[str]]:
    """Name -> the strings of the value an assignment among ``statements`` (and the blocks
    in them) binds it to."""
    bound: dict[str, list[str]] = {}
    for statement in statements:
        for node in ast.walk(statement):
            if isinstance(node, ast.Assign):
                texts = _strings(node.value, {})
                bound.update((t.id, texts) for t in node.targets if isinstance(t, ast.Name))
    return bound


def _strings(node: ast.AST, named: dict[str, list[str]]) -> list[str]:
    texts: list[str] = []
    for inner in ast.walk(node):
        if isinstance(inner, ast.Constant) and isinstance(inner.value, str):
            texts.append(inner.value)
        elif isinstance(inner, ast.Name):
            texts.extend(named.get(inner.id, ()))
    return texts


def _skip_conditions(loop: ast.For) -> list[ast.expr]:
    """The tests of the ``if`` statements around a ``continue`` of the loop's own body (not a
    nested loop's), when the body also keeps items by a call; none otherwise."""
    conditions: list[ast.expr] = []
    keeps = False
    stack: list[tuple[ast.AST, tuple[ast.expr, ...]]] = [(s, ()) for s in loop.body]
    while stack:
        node, tests = stack.pop()
        if isinstance(node, ast.For | ast.While | ast.FunctionDef | ast.Lambda):
            continue
        if isinstance(node, ast.Continue):
            conditions.extend(tests)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute | ast.Name):
            name = node.func.attr if isinstance(node.func, ast.Attribute) else node.func.id
            keeps = keeps or name in _KEEPS
        inner = (*tests, node.test) if isinstance(node, ast.If) else tests
        stack.extend((child, inner) for child in ast.iter_child_nodes(node))
    return conditions if keeps else []


def python_code(path: str, context: CallContext) -> list[str]:
    """Python code the call runs that names ``path``'s file (``python3 - <<EOF``, ``-c``)."""
    name = posixpath.basename(path)
    return [
        effect.command
        for effect in context.effects
        if effect.kind == "exec"
        and effect.argv0 in ("python", "python3")
        and effect.command
        and name in effect.command
    ]


def restores_older_revision(path: str, context: CallContext) -> bool:
    """Whether the call puts an older revision of ``path`` in place from git history:
    ``git checkout HEAD~1 -- f``, ``git restore --source=abc1234 f``, ``git show HEAD^:f > f``
    (restoring the checkout's own version, ``git checkout -- f``, is not)."""
    name = posixpath.basename(path)
    for index, effect in enumerate(context.effects):
        argv = effect.argv
        if effect.kind != "exec" or effect.argv0 != "git" or len(argv) < 3:
            continue
        if not any(name in word for word in argv[2:]):
            continue
        revisions = _revisions(argv[1], argv[2:])
        if any(_OLDER.search(r) and not _own_stash(r, context, index) for r in revisions):
            return True
    return False


def _stashes_made(effects: Iterable[Effect], count: int = 0) -> int:
    """How many stash entries the session's own ``git stash`` (``push``, ``save``) left on
    the stack after ``effects``, less those it popped, dropped, branched or cleared."""
    for effect in effects:
        argv = effect.argv
        if effect.kind != "exec" or effect.argv0 != "git" or len(argv) < 2 or argv[1] != "stash":
            continue
        words = argv[2:]
        action = words[0] if words and not words[0].startswith("-") else "push"
        if action in ("push", "save"):
            count += 1
        elif action in ("pop", "drop", "branch"):
            count = max(count - 1, 0)
        elif action == "clear":
            count = 0
    return count


def _own_stash(revision: str, context: CallContext, index: int) -> bool:
    """Whether ``revision`` names a stash entry this session made (``stash@{0}``) before the
    call's effect ``index``: what it holds is the working tree the session had, not an older
    revision of the repository."""
    found = _STASH_ENTRY.fullmatch(revision)
    if found is None:
        return False
    made = _stashes_made(context.effects[:index], _stashes_made(context.session.effects))
    return int(found.group(1) or 0) < made


def _revisions(command: str, words: tuple[str, ...]) -> list[str]:
    if command == "show":
        return [word.split(":", 1)[0] for word in words if ":" in word]
    if command == "restore":
        found = [w.split("=", 1)[1] for w in words if w.startswith("--source=")]
        pairs = pairwise(words)
        return found + [value for flag, value in pairs if flag in ("-s", "--source")]
    if command == "checkout":
        if "--" in words:
            return [w for w in words[: words.index("--")] if not w.startswith("-")][:1]
        operands = [w for w in words if not w.startswith("-")]
        return operands[:1] if len(operands) > 1 else []
    return []


def _plain(regex: str) -> str:
    return _ESCAPED.sub(r"\1", regex)


def substitution_weakens(pattern: str, replacement: str, excused: Excuse | None) -> bool:
    """Whether substituting ``replacement`` for ``pattern`` drops an assertion or changes what
    it expects: ``s/assert/# assert/``, ``s/== 4/== 5/`` and ``s/assert x//`` count,
    ``s/def f(x)/def f(x):/`` does not."""
    if not _COMPARISON.search(pattern):
        return False
    kept_code = replacement.split("#", 1)[0].split("//", 1)[0]
    if len(_ASSERT_WORD.findall(pattern)) > len(_ASSERT_WORD.findall(kept_code)):
        return True
    if not pattern.lstrip("^( ").startswith("assert"):
        pattern, replacement = f"assert {pattern}", f"assert {replacement}"
    return weakens(pattern, replacement, excused)
