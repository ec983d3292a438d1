"""The four task classes, each drafted from one function of a scanned repository:

- **repair**: a behaviour-changing mutation of the function that its tests catch;
- **build**: the function's body removed, the tests that call it hidden;
- **extend**: the whole function (a feature used nowhere else) and its tests removed, the
  instruction describing it from its signature and docstring;
- **qa**: what a call of the function (taken from the tests, its numbers changed) returns,
  the answer computed by running the original code.
"""

from __future__ import annotations

import ast
import random
import re
import subprocess
import sys
from collections.abc import Callable

from trainer.tasks._config import Difficulty
from trainer.tasks._mutate import mutations
from trainer.tasks._repo import Function, Repository, run_pytest
from trainer.tasks._write import TaskDraft

__all__ = ["DRAFTERS", "Rejected", "difficulty_of"]

MAX_CALLERS = 150
_SHOWN_TESTS = 3


class Rejected(Exception):
    """This function makes no task of this class; the message says why."""


def difficulty_of(lines: int, tests: int) -> Difficulty:
    """Easy, medium or hard from the size of the change (lines) and of its tests."""
    points = lines + 2 * tests
    return "easy" if points <= 12 else "medium" if points <= 40 else "hard"


def _callers(repo: Repository, function: Function, limit: int = MAX_CALLERS) -> list[str]:
    callers = sorted(set(repo.callers.get(function.label, [])))
    if not callers:
        raise Rejected("no passing test calls it")
    if len(callers) > limit:
        raise Rejected(f"more than {MAX_CALLERS} tests call it")
    return callers


def _files_of(repo: Repository, node_ids: list[str]) -> list[str]:
    return sorted({repo.test_file(node_id) for node_id in node_ids})


def _where(function: Function) -> str:
    owner, _, name = function.qualname.rpartition(".")
    return f"`{name}` (a method of `{owner}`)" if owner else f"`{name}`"


def _signature(function: Function) -> str:
    node = function.node
    prefix = "async def" if isinstance(node, ast.AsyncFunctionDef) else "def"
    returns = f" -> {ast.unparse(node.returns)}" if node.returns else ""
    return f"{prefix} {node.name}({ast.unparse(node.args)}){returns}"


def repair(repo: Repository, function: Function, rng: random.Random) -> TaskDraft:
    callers = _callers(repo, function)
    text = repo.source(function.path)
    sites = mutations(text, function.node)
    if not sites:
        raise Rejected("nothing to mutate")
    rng.shuffle(sites)
    for mutation in sites[:4]:
        mutated = mutation.apply(text)
        (repo.root / function.path).write_text(mutated, encoding="utf-8")
        try:
            run = run_pytest(repo.root, callers, timeout=60.0)
        finally:
            (repo.root / function.path).write_text(text, encoding="utf-8")
        if run.exit_code == 1:  # some tests failed: the mutant is caught
            shown = "\n".join(f"- `{node_id}`" for node_id in callers[:_SHOWN_TESTS])
            more = f"\n- … and {len(callers) - _SHOWN_TESTS} more" if len(callers) > 3 else ""
            return TaskDraft(
                task_class="repair",
                target=f"{function.label} ({mutation.description})",
                instruction=(
                    f"Some tests of this repository fail. Among the tests that may fail:\n\n"
                    f"{shown}{more}\n\nFind the bug in the library's code and fix it. Do not "
                    "change the tests: the original tests are run again to check your fix.\n"
                ),
                difficulty=difficulty_of(function.lines, len(callers)),
                lines_removed=0,
                tests_involved=len(callers),
                workspace={function.path: mutated},
                hidden=_files_of(repo, callers),
                node_ids=callers,
                oracle=[function.path],
            )
    raise Rejected("no mutant the tests catch")


def _body_lines(function: Function) -> int:
    if function.body_start <= function.node.lineno:
        raise Rejected("its body shares the line of its def")
    return function.end - function.body_start + 1


def build(repo: Repository, function: Function, rng: random.Random) -> TaskDraft:
    callers = _callers(repo, function)
    removed = _body_lines(function)
    if removed < 2 or function.name.startswith("__") or "<locals>" in function.qualname:
        raise Rejected("too small, a dunder or nested")
    lines = repo.source(function.path).splitlines(keepends=True)
    first = lines[function.body_start - 1]
    indent = first[: len(first) - len(first.lstrip())]
    stub = f'{indent}raise NotImplementedError("{function.name}")\n'
    emptied = "".join([*lines[: function.body_start - 1], stub, *lines[function.end :]])
    hidden = _files_of(repo, callers)
    return TaskDraft(
        task_class="build",
        target=function.label,
        instruction=(
            f"Implement {_where(function)} in `{function.path}`: its body was removed and it "
            f"raises `NotImplementedError`.\n\n```python\n{_signature(function)}\n```\n\n"
            + (f"Its docstring says:\n\n{function.docstring}\n\n" if function.docstring else "")
            + "Hidden tests check it as the rest of the library uses it; the test files that "
            "called it were removed from the repository.\n"
        ),
        difficulty=difficulty_of(removed, len(callers)),
        lines_removed=removed,
        tests_involved=len(callers),
        workspace={function.path: emptied, **dict.fromkeys(hidden)},
        hidden=hidden,
        node_ids=callers,
        oracle=[function.path],
    )


def _uses(tree: ast.AST, name: str) -> bool:
    """Whether code in ``tree`` refers to ``name`` (imports and ``__all__`` aside)."""
    return any(
        (isinstance(node, ast.Name) and node.id == name)
        or (isinstance(node, ast.Attribute) and node.attr == name)
        for node in ast.walk(tree)
    )


def _without_exports(text: str, name: str) -> str:
    """``text`` with ``name`` gone from its ``from … import`` statements and ``__all__``."""
    lines = text.splitlines(keepends=True)
    edits: list[tuple[int, int, str]] = []
    for node in ast.walk(ast.parse(text)):
        if not isinstance(node, ast.stmt):
            continue
        replacement: ast.stmt | None = None
        if isinstance(node, ast.ImportFrom) and any(a.name == name for a in node.names):
            kept = [alias for alias in node.names if alias.name != name]
            replacement = ast.ImportFrom(node.module, kept, node.level) if kept else ast.Pass()
        elif (
            isinstance(node, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets)
            and isinstance(node.value, ast.List | ast.Tuple)
        ):
            elements = [
                e for e in node.value.elts if not (isinstance(e, ast.Constant) and e.value == name)
            ]
            if len(elements) < len(node.value.elts):
                value = type(node.value)(elements, ast.Load())
                replacement = ast.Assign(node.targets, value, lineno=node.lineno)
        if replacement is not None and node.end_lineno is not None:
            first = lines[node.lineno - 1]
            indent = first[: len(first) - len(first.lstrip())]
            code = ast.unparse(ast.fix_missing_locations(replacement))
            if isinstance(replacement, ast.ImportFrom) and node.end_lineno > node.lineno:
                head, _, names = code.partition(" import ")
                listed = "".join(f"{indent}    {n},\n" for n in names.split(", "))
                code = f"{head} import (\n{listed}{indent})"
            edits.append((node.lineno, node.end_lineno, f"{indent}{code}\n"))
    for start, end, code in sorted(edits, reverse=True):
        lines[start - 1 : end] = [code]
    return "".join(lines)


def extend(repo: Repository, function: Function, rng: random.Random) -> TaskDraft:
    callers = _callers(repo, function)
    if not function.docstring or len(function.docstring) < 20:
        raise Rejected("no docstring to describe the feature with")
    if function.name.startswith("_") or "<locals>" in function.qualname:
        raise Rejected("private or nested")
    lines = repo.source(function.path).splitlines(keepends=True)
    end = function.end
    while end < len(lines) and not lines[end].strip():
        end += 1
    changed = {function.path: "".join(lines[: function.start - 1] + lines[end:])}
    for path in repo.sources:
        text = changed.get(path, repo.source(path))
        if function.name not in text:
            continue
        edited = _without_exports(text, function.name)
        if _uses(ast.parse(edited), function.name):
            raise Rejected("the library uses it elsewhere")
        if edited != repo.source(path):
            changed[path] = edited
    word = re.compile(rf"\b{re.escape(function.name)}\b")
    mentioning = [path for path in repo.tests if word.search(repo.source(path))]
    removed = function.end - function.start + 1
    hidden = sorted(set(_files_of(repo, callers)) | set(mentioning))
    owner = function.qualname.rpartition(".")[0]
    home = f"as a method of class `{owner}` " if owner else ""
    return TaskDraft(
        task_class="extend",
        target=function.label,
        instruction=(
            f"Add a new feature to this library: {home}in `{function.path}`,\n\n"
            f"```python\n{_signature(function)}\n```\n\n{function.docstring}\n\n"
            "Hidden tests will check the feature.\n"
        ),
        difficulty=difficulty_of(removed, len(callers)),
        lines_removed=removed,
        tests_involved=len(callers),
        workspace={**changed, **dict.fromkeys(hidden)},
        hidden=hidden,
        node_ids=callers,
        oracle=sorted(changed),
    )


def _literal_call(node: ast.Call) -> bool:
    arguments = [*node.args, *(keyword.value for keyword in node.keywords)]
    if not arguments or any(isinstance(a, ast.Starred) for a in node.args):
        return False
    try:
        for argument in arguments:
            ast.literal_eval(argument)
    except ValueError:
        return False
    return all(keyword.arg for keyword in node.keywords)


class _Perturb(ast.NodeTransformer):
    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def visit_Constant(self, node: ast.Constant) -> ast.Constant:
        if type(node.value) is int:
            return ast.Constant(node.value + self.rng.randint(1, 3))
        return node


def _evaluate(repo: Repository, imports: str, expression: str) -> str:
    program = f"{imports}\nprint(repr({expression}))\n"
    env_path = [str(repo.root / "src")] if (repo.root / "src").is_dir() else []
    results = []
    for _ in range(2):
        try:
            done = subprocess.run(
                [sys.executable, "-c", program],
                cwd=repo.root,
                capture_output=True,
                text=True,
                timeout=20,
                env={
                    "PYTHONPATH": ":".join(env_path),
                    "PYTHONHASHSEED": "0",
                    "PYTHONDONTWRITEBYTECODE": "1",
                },
                stdin=subprocess.DEVNULL,
            )
        except subprocess.TimeoutExpired:
            raise Rejected("the call does not return") from None
        if done.returncode != 0:
            raise Rejected("the call raises")
        results.append(done.stdout.strip())
    answer = results[0]
    if results[1] != answer or not answer or len(answer) > 200:
        raise Rejected("an unstable or long answer")
    try:
        if repr(ast.literal_eval(answer)) != answer:
            raise Rejected("the answer is no plain literal")
    except (ValueError, SyntaxError):
        raise Rejected("the answer is no literal") from None
    return answer


def qa(repo: Repository, function: Function, rng: random.Random) -> TaskDraft:
    callers = _callers(repo, function, limit=10**6)
    if "." in function.qualname or function.name.startswith("_"):
        raise Rejected("not a public top-level function")
    for test_file in _files_of(repo, callers):
        tree = ast.parse(repo.source(test_file))
        imports = [
            ast.unparse(node)
            for node in tree.body
            if isinstance(node, ast.Import | ast.ImportFrom)
            and not (isinstance(node, ast.ImportFrom) and node.level)
            and "pytest" not in ast.unparse(node)
        ]
        calls = [
            node
            for node in ast.walk(tree)
            if isinstance(node, ast.Call)
            and (ast.unparse(node.func).rpartition(".")[2] == function.name)
            and _literal_call(node)
        ]
        rng.shuffle(calls)
        for call in calls[:3]:
            expression = ast.unparse(_Perturb(rng).visit(call))
            try:
                answer = _evaluate(repo, "\n".join(imports), expression)
            except Rejected:
                continue
            snippet = "\n".join([*imports, expression])
            return TaskDraft(
                task_class="qa",
                target=f"{function.label}: {expression}",
                instruction=(
                    "With this repository's code as it is, what is the value of the last line "
                    f"of this Python snippet?\n\n```python\n{snippet}\n```\n\nWrite it to "
                    "`answer.txt` in the repository's root as Python prints it with `repr()` "
                    "(for example `'text'`, `42` or `[1, 2]`). Do not change the repository.\n"
                ),
                difficulty=difficulty_of(function.lines, 0),
                lines_removed=0,
                tests_involved=0,
                expected=answer,
            )
    raise Rejected("no call of it with literal arguments gives a plain value")


DRAFTERS: dict[str, Callable[[Repository, Function, random.Random], TaskDraft]] = {
    "repair": repair,
    "qa": qa,
    "build": build,
    "extend": extend,
}
