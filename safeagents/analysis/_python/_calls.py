"""Effects of individual Python calls: files, processes, network and extra tool functions."""

from __future__ import annotations

import ast
import posixpath
import re
import shlex
from collections.abc import Callable, Mapping

from safeagents._actions import AnalysisContext, Effect, EffectKind
from safeagents.analysis._embedded import active_level, analyse
from safeagents.analysis._python._network import NETWORK_FUNCTIONS, network_call
from safeagents.analysis._python._resolve import Resolver
from safeagents.analysis._python._site import PythonCall, PythonTool, argument, opaque_python

__all__ = ["OPEN_FUNCTIONS", "CallEffects", "opaque_python"]

OPEN_FUNCTIONS = frozenset({"open", "io.open", "codecs.open"})
_SEGMENT_CLIP = 500
_LINE_BREAK = re.compile(r"(?<=\n)|(?<=\r)(?!\n)")
"""Where Python's tokenizer ends lines (not at form feeds, unlike ``str.splitlines``)."""
_DELETE_FUNCTIONS = frozenset(
    {"os.remove", "os.unlink", "os.rmdir", "os.removedirs", "shutil.rmtree"}
)
_COPY_FUNCTIONS = frozenset({"shutil.copy", "shutil.copy2", "shutil.copyfile", "shutil.copytree"})
_MOVE_FUNCTIONS = frozenset({"os.rename", "os.replace", "os.renames", "shutil.move"})
_LINK_FUNCTIONS = frozenset({"os.symlink", "os.link"})
_ARGV_OR_SHELL_FUNCTIONS = frozenset(
    {
        "subprocess.run",
        "subprocess.call",
        "subprocess.check_call",
        "subprocess.check_output",
        "subprocess.Popen",
        "pty.spawn",
    }
)
_SHELL_FUNCTIONS = frozenset(
    {
        "os.system",
        "os.popen",
        "subprocess.getoutput",
        "subprocess.getstatusoutput",
        "asyncio.create_subprocess_shell",
    }
)
_EXECV_FUNCTIONS = frozenset({"os.execv", "os.execvp", "os.execve", "os.execvpe"})
_EXECL_FUNCTIONS = frozenset({"os.execl", "os.execlp", "os.execle", "os.execlpe"})
_DYNAMIC_ROOTS = frozenset(
    {"os", "shutil", "subprocess", "pathlib", "io", "builtins", "socket", "pty"}
)
_WRITE_FLAGS = frozenset({"O_WRONLY", "O_RDWR", "O_CREAT", "O_TRUNC", "O_APPEND"})
_PATH_METHODS = frozenset(
    {"write_text", "write_bytes", "read_text", "read_bytes", "unlink", "rmdir", "touch"}
    | {"open", "rename", "replace"}
)
_UNAMBIGUOUS_PATH_METHODS = frozenset(
    {"write_text", "write_bytes", "read_text", "read_bytes", "unlink", "rmdir"}
)


class CallEffects:
    """Collects the effects of the calls of one snippet, in the order they are seen."""

    def __init__(
        self,
        code: str,
        resolver: Resolver,
        ctx: AnalysisContext,
        analyse_nested: Callable[[str, AnalysisContext], list[Effect]],
        tools: Mapping[str, PythonTool],
    ) -> None:
        self.effects: list[Effect] = []
        self.ctx = ctx
        self.write_contents: dict[int, str | None] = {}
        """``id(open call)`` -> what the surrounding code writes to it, when literal."""
        self.replacements: list[str] = []
        """Literal new text of the ``str.replace``/``re.sub`` calls seen so far: what a
        write of text that is not literal adds, when the script rewrites a file it read."""
        self._code_lines = _LINE_BREAK.split(code)
        self.resolver = resolver
        self._analyse_nested = analyse_nested
        self._tools = tools
        self._dynamic_roots = (
            _DYNAMIC_ROOTS | {name.split(".", 1)[0] for name in tools if "." in name}
            if tools
            else _DYNAMIC_ROOTS
        )

    def call(self, node: ast.Call) -> None:
        """Record the effects of one call expression."""
        name = self.resolver.qualname(node.func)
        if name is not None and self._named_call(name, node):
            return
        if isinstance(node.func, ast.Attribute) and node.func.attr in _PATH_METHODS:
            self._path_method(node, node.func)

    def opaque(self, node: ast.AST) -> None:
        self.effects.append(opaque_python(self._segment(node)))

    def _named_call(self, name: str, node: ast.Call) -> bool:
        """Effects of a call to a known module function; ``False`` if ``name`` is none."""
        if name in OPEN_FUNCTIONS:
            self._open(node, self.argument(node, 0, "file"), self.argument(node, 1, "mode"))
        elif name == "os.open":
            self._os_open(node)
        elif name in _DELETE_FUNCTIONS:
            for path in self.paths(node, self.argument(node, 0, "path")):
                self.effects.append(Effect("delete", path=path))
        elif name in _COPY_FUNCTIONS | _MOVE_FUNCTIONS | _LINK_FUNCTIONS | {"os.truncate"}:
            self._transfer(name, node)
        elif name == "os.chdir":
            target = self.resolver.single_text(self.argument(node, 0, "path"))
            if target is not None:
                self.ctx = self.ctx.chdir(target)
        elif name in _ARGV_OR_SHELL_FUNCTIONS | _SHELL_FUNCTIONS:
            self._process(node)
        elif name in _EXECV_FUNCTIONS | _EXECL_FUNCTIONS | {"asyncio.create_subprocess_exec"}:
            self._exec_family(name, node)
        elif name in ("exec", "eval"):
            self._nested_python(node)
        elif name in NETWORK_FUNCTIONS:
            network_call(self, name, node)
        elif name in self._tools:
            tool = self._tools[name]
            self.effects.extend(tool(PythonCall(node, self.resolver, self.ctx, self._segment)))
        elif name in ("__import__", "importlib.import_module", "getattr"):
            self._dynamic_lookup(name, node)
        else:
            return False
        return True

    def argument(self, node: ast.Call, index: int | None, *keywords: str) -> ast.expr | None:
        return argument(node, index, *keywords)

    def paths(self, node: ast.Call, argument: ast.AST | None) -> list[str]:
        """Resolved paths ``argument`` may be; records an opaque exec when it is unknown."""
        found = self.resolver.values(argument)
        if found is None:
            self.opaque(node)
            return []
        return [self.ctx.resolve(item.text) for item in found]

    def _open(self, node: ast.Call, path: ast.AST | None, mode_node: ast.AST | None) -> None:
        mode = "r" if mode_node is None else self.resolver.single_text(mode_node)
        if mode is None:
            self.opaque(node)
            return
        written = self.write_contents.get(id(node))
        added = written if written is not None else self._replaced()
        for resolved in self.paths(node, path):
            if not any(flag in mode for flag in "wax+"):
                self.effects.append(Effect("read", path=resolved))
                continue
            truncating = "w" in mode or "x" in mode
            self.effects.append(
                Effect(
                    "write",
                    path=resolved,
                    content=written if truncating else None,
                    added=added,
                    new_file="x" in mode,
                )
            )

    def _replaced(self) -> str | None:
        return "\n".join(self.replacements) if self.replacements else None

    def _os_open(self, node: ast.Call) -> None:
        flags = self.argument(node, 1, "flags")
        names: set[str] = set()
        for part in ast.walk(flags) if flags is not None else ():
            if isinstance(part, ast.Attribute):
                names.add(part.attr)
            elif isinstance(part, ast.Name):
                names.add(part.id)
        kind: EffectKind = "write" if names & _WRITE_FLAGS else "read"
        for path in self.paths(node, self.argument(node, 0, "path")):
            self.effects.append(Effect(kind, path=path))

    def _transfer(self, name: str, node: ast.Call) -> None:
        """Copies, moves, links and truncation: one source and (mostly) one destination."""
        sources = self.paths(node, self.argument(node, 0, "src", "path"))
        if name == "os.truncate":
            self.effects.extend(Effect("write", path=path) for path in sources)
            return
        destinations = self.resolver.values(self.argument(node, 1, "dst"))
        if not sources:
            return
        if destinations is None:
            self.opaque(node)
            return
        for source in sources:
            for destination in destinations:
                target = self.ctx.resolve(_into_directory(destination.text, source))
                if name in _MOVE_FUNCTIONS:
                    self.effects.append(Effect("move", path=source, dest=target))
                elif name in _LINK_FUNCTIONS:
                    self.effects.append(Effect("write", path=target))
                else:
                    self.effects.append(Effect("read", path=source))
                    self.effects.append(Effect("write", path=target))

    def _path_method(self, node: ast.Call, func: ast.Attribute) -> None:
        receiver = self.resolver.values(func.value)
        if receiver is None or not all(item.is_path for item in receiver):
            if receiver is None and func.attr in _UNAMBIGUOUS_PATH_METHODS:
                self.opaque(node)
            return
        method = func.attr
        if method == "open":
            self._open(node, func.value, self.argument(node, 0, "mode"))
            return
        if method in ("rename", "replace"):
            targets = self.paths(node, self.argument(node, 0, "target"))
            for item in receiver:
                source = self.ctx.resolve(item.text)
                self.effects.extend(Effect("move", path=source, dest=dest) for dest in targets)
            return
        content = added = None
        if method in ("write_text", "write_bytes"):
            content = self.resolver.single_text(self.argument(node, 0, "data"))
            added = content if content is not None else self._replaced()
        for item in receiver:
            path = self.ctx.resolve(item.text)
            if method in ("unlink", "rmdir"):
                self.effects.append(Effect("delete", path=path))
            elif method in ("read_text", "read_bytes"):
                self.effects.append(Effect("read", path=path))
            else:
                self.effects.append(Effect("write", path=path, content=content, added=added))

    def _process(self, node: ast.Call) -> None:
        command = self.argument(node, 0, "args", "cmd", "command", "argv")
        if isinstance(command, (ast.List, ast.Tuple)):
            self._argv(node, command.elts)
            return
        scripts = self.resolver.values(command)
        if scripts is None:
            self.opaque(node)
            return
        for script in scripts:
            self.effects.extend(self.shell(script.text, self.ctx))

    def _exec_family(self, name: str, node: ast.Call) -> None:
        if name in _EXECV_FUNCTIONS:
            argv = self.argument(node, 1, "args")
            if isinstance(argv, (ast.List, ast.Tuple)):
                self._argv(node, argv.elts)
            else:
                self.opaque(node)
            return
        arguments = node.args
        if name in _EXECL_FUNCTIONS:
            arguments = arguments[1:-1] if name.endswith("e") else arguments[1:]
        self._argv(node, arguments)

    def _argv(self, node: ast.Call, elements: list[ast.expr]) -> None:
        argv: list[str] = []
        for element in elements:
            text = self.resolver.single_text(element)
            if text is None or isinstance(element, ast.Starred):
                self.opaque(node)
                return
            argv.append(text)
        if not argv:
            self.opaque(node)
            return
        command = shlex.join(argv)
        own = Effect("exec", argv0=posixpath.basename(argv[0]), argv=tuple(argv), command=command)
        analysed = self.shell(command, self.ctx)
        if not any(item.kind == "exec" and item.argv0 == own.argv0 for item in analysed):
            self.effects.append(own)
        self.effects.extend(analysed)

    def _nested_python(self, node: ast.Call) -> None:
        source = self.argument(node, 0, "source")
        if isinstance(source, ast.Call) and self.resolver.qualname(source.func) == "compile":
            source = self.argument(source, 0, "source")
        text = self.resolver.single_text(source)
        if text is None:
            self.opaque(node)
            return
        self.effects.extend(self._analyse_nested(text, self.ctx))

    def _dynamic_lookup(self, name: str, node: ast.Call) -> None:
        """``__import__(x)``/``getattr(os, x)`` with a computed name hides what runs."""
        if name == "getattr":
            owner = self.resolver.qualname(node.args[0]) if node.args else None
            if owner is None or owner.split(".", 1)[0] not in self._dynamic_roots:
                return
            if self.resolver.single_text(self.argument(node, 1)) is None:
                self.opaque(node)
        elif self.resolver.single_text(self.argument(node, 0, "name")) is None:
            self.opaque(node)

    def shell(self, script: str, ctx: AnalysisContext) -> list[Effect]:
        """Effects of a shell script, through the shell analyser (at the current re-parse level)."""
        try:
            effects = analyse("shell", script, ctx, active_level())
        except Exception:
            return [Effect("exec", command=script, opaque=True, unanalysable="error")]
        return [_plain_exec(script)] if effects is None else effects

    def _segment(self, node: ast.AST) -> str:
        """The source text of ``node`` (clipped), for opaque effects."""
        start = getattr(node, "lineno", None)
        end = getattr(node, "end_lineno", None)
        start_column = getattr(node, "col_offset", None)
        end_column = getattr(node, "end_col_offset", None)
        if start is None or end is None or start_column is None or end_column is None:
            return ast.dump(node)[:_SEGMENT_CLIP]
        lines = [line.encode() for line in self._code_lines[start - 1 : end]]
        if not lines:
            return ""
        if len(lines) == 1:
            lines[0] = lines[0][start_column:end_column]
        else:
            lines[0] = lines[0][start_column:]
            lines[-1] = lines[-1][:end_column]
        return b"".join(lines).decode("utf-8", "replace")[:_SEGMENT_CLIP]


def _into_directory(destination: str, source: str) -> str:
    """``shutil.copy('a.py', 'tests/')`` writes ``tests/a.py``."""
    if destination.endswith("/"):
        return posixpath.join(destination, posixpath.basename(source))
    return destination


def _plain_exec(script: str) -> Effect:
    """An exec effect without shell analysis (used when the shell analyser is absent)."""
    try:
        argv = tuple(shlex.split(script))
    except ValueError:
        return Effect("exec", command=script, opaque=True)
    argv0 = posixpath.basename(argv[0]) if argv else None
    return Effect("exec", argv0=argv0, argv=argv, command=script)
