"""Walks a tree-sitter-bash tree statement by statement, tracking directory and variables."""

from __future__ import annotations

import re

from tree_sitter import Node

from safeagents._actions import Effect
from safeagents._cut import is_cut
from safeagents.analysis._shell._chunks import PARSE_LIMIT, masked, plan
from safeagents.analysis._shell._cut import cut_readings
from safeagents.analysis._shell._guard import GUARD_ABOVE, parses_in_time
from safeagents.analysis._shell._model import (
    MAX_EXPANSIONS,
    MAX_LEVEL,
    MAX_NESTING,
    NO_INPUT,
    UNKNOWN_OUTPUT,
    BudgetExhausted,
    Run,
    ShellState,
    Stream,
    Word,
    gave_up,
    opaque_exec,
)
from safeagents.analysis._shell._parser import parse, parser_input
from safeagents.analysis._shell._redirects import Redirections
from safeagents.analysis._shell._simple import SimpleCommands
from safeagents.analysis._shell._words import WordResolver

_BLOCKS = frozenset(
    (
        "program",
        "compound_statement",
        "do_group",
        "if_statement",
        "elif_clause",
        "else_clause",
        "while_statement",
        "case_item",
        "ERROR",
    )
)
_SUBSTITUTIONS = frozenset(("command_substitution", "process_substitution"))
_TEMP_DIR = re.compile(r'"?\$\(\s*mktemp\s+(?:[^)]*\s)?-[a-zA-Z]*d')
"""A value ``$(mktemp -d …)``: a new directory."""
_SKIPPED = frozenset(("comment", "heredoc_body", "heredoc_start", "heredoc_end"))


class Walker:
    """Analyses one script text; nested scripts (``bash -c``) get their own walker."""

    def __init__(self, script: str, run: Run, level: int) -> None:
        self.script_text = script
        ascii_text = script if script.isascii() else None
        self.source = script.encode("utf-8", "replace")
        self.run = run
        self.level = level
        self.resolver = WordResolver(self.source, run, self, ascii_text)
        self.redirections = Redirections(self)
        self.commands = SimpleCommands(self)

    def text(self, node: Node) -> str:
        return self.resolver.text(node)

    def analyse(self, state: ShellState, depth: int, stdin: Stream = NO_INPUT) -> None:
        """Analyse the script, in top-level pieces when it is too long to parse at once."""
        state.scratch.texts.append(self.source)
        if len(self.source) <= PARSE_LIMIT:
            self._analyse_tree(state, depth, stdin)
            return
        pieces = plan(self.source)
        if len(pieces.pieces) == 1 and pieces.pieces[0].parseable:
            whole = pieces.pieces[0]
            self._analyse_tree(state, depth, stdin, whole.text_spans, whole.closing)
            return
        repeats: set[tuple[bytes, tuple[object, ...]]] = set()
        for piece in pieces.pieces:
            raw = self.source[piece.start : piece.end]
            if raw.isspace():
                continue
            text = raw.decode("utf-8", "replace")
            if not piece.parseable:
                self.run.emit(gave_up(text))
                continue
            before = state.snapshot()
            if (raw, before) in repeats:
                continue  # the same text in the same state: nothing new to find
            walker = Walker(text, self.run, self.level)
            walker._analyse_tree(state, depth, stdin, piece.text_spans, piece.closing)
            if state.snapshot() == before:
                repeats.add((raw, before))
        if pieces.lossy:
            self.run.emit(gave_up(self.script_text))

    def _analyse_tree(
        self,
        state: ShellState,
        depth: int,
        stdin: Stream,
        text_spans: tuple[tuple[int, int], ...] = (),
        closing: bytes = b"",
    ) -> None:
        code_bytes = len(self.source) - sum(end - start for start, end in text_spans)
        self.run.charge_parse(code_bytes)
        long_piece = len(self.source) > PARSE_LIMIT
        code = (masked(self.source, text_spans) if long_piece else self.source) + closing
        if code_bytes > GUARD_ABOVE and not parses_in_time(parser_input(code)):
            self.run.emit(gave_up(self.script_text))  # its parse would stall the process
            return
        root = parse(code).root_node
        cut = root.has_error and not long_piece and is_cut(self.script_text)
        if cut and self._read_cut(state, depth, stdin):
            self.run.emit(opaque_exec(self.script_text))  # the cut command stays partial
            return
        if root.has_error and not long_piece and b"((" in self.source:
            spaced = _spaced_parentheses(self.source)
            if not parse(spaced).root_node.has_error:
                # bash runs a `((` that is no arithmetic as nested subshells: `( (`
                self.run.charge_parse(len(spaced))
                text = spaced.decode("utf-8", "replace")
                Walker(text, self.run, self.level)._analyse_tree(state, depth, stdin)
                return
        self.block(root, state, depth, stdin)
        if root.has_error:
            self.run.emit(opaque_exec(self.script_text))

    def _read_cut(self, state: ShellState, depth: int, stdin: Stream) -> bool:
        """Analyse the first reading of a script a log cut short (its open constructs closed
        at the cut, ``_cut``) that parses; ``False`` when none does."""
        for text in cut_readings(self.script_text):
            source = text.encode("utf-8", "replace")
            self.run.charge_parse(len(source))
            root = parse(source).root_node
            if not root.has_error:
                Walker(text, self.run, self.level).block(root, state, depth, stdin)
                return True
        return False

    # Interpreter protocol, used by command handlers.

    def script(self, text: str, state: ShellState, depth: int, stdin: Stream = NO_INPUT) -> None:
        if self.level + 1 > MAX_LEVEL or depth > MAX_NESTING:
            self.run.emit(gave_up(text))
            return
        Walker(text, self.run, self.level + 1).analyse(state, depth + 1, stdin)

    def words(self, words: list[Word], state: ShellState, depth: int, command: str) -> Stream:
        return self.commands.run_words(words, state, depth + 1, NO_INPUT, None, command)

    # Statements.

    def statement(self, node: Node, state: ShellState, depth: int, stdin: Stream) -> Stream:
        self.run.tick()
        if depth > MAX_NESTING:
            self.run.emit(gave_up(self.text(node)))
            return UNKNOWN_OUTPUT
        kind = node.type
        if kind == "command":
            return self.commands.analyse(node, state, depth, stdin, None)
        if kind == "redirected_statement":
            return self.redirected(node, state, depth, stdin)
        if kind == "pipeline":
            return self.pipeline(node.named_children, state, depth, stdin)
        if kind == "list":
            result = UNKNOWN_OUTPUT
            for child in _flatten_list(node):
                result = self.statement(child, state, depth + 1, stdin)
            return result
        if kind in _BLOCKS:
            return self.block(node, state, depth + 1, stdin)
        if kind == "subshell":
            return self.block(node, state.fork(), depth + 1, stdin)
        if kind == "negated_command":
            return self.block(node, state, depth + 1, stdin)
        if kind == "for_statement":
            self.for_loop(node, state, depth + 1, stdin)
        elif kind == "case_statement":
            self.block(node, state, depth + 1, stdin)
        elif kind == "function_definition":
            body = node.child_by_field_name("body")
            if body is not None:
                self.statement(body, state.fork(), depth + 1, NO_INPUT)
        elif kind == "variable_assignment":
            self.assign(node, state, depth)
        elif kind == "variable_assignments":
            for child in node.named_children:
                self.assign(child, state, depth)
        elif kind == "declaration_command":
            self.declare(node, state, depth)
        elif kind == "unset_command":
            self.builtin_exec(node)
            for child in node.named_children:
                if child.type == "variable_name":
                    state.variables.pop(self.text(child), None)
        elif kind == "c_style_for_statement":
            self.c_style_for(node, state, depth + 1, stdin)
        else:
            self.scan(node, state, depth + 1)
        return UNKNOWN_OUTPUT

    def block(self, node: Node, state: ShellState, depth: int, stdin: Stream) -> Stream:
        """Run the statements among ``node``'s children in order, in ``state``."""
        children = [
            (child, kind) for child in node.children if (kind := child.type) not in _SKIPPED
        ]
        results: list[Stream] = []
        for index, (child, kind) in enumerate(children):
            if not child.is_named:
                continue
            background = index + 1 < len(children) and children[index + 1][1] == "&"
            target = state.fork() if background else state
            if kind in _SUBSTITUTIONS:
                self.substitution(child, target, depth)
                continue
            results.append(self.statement(child, target, depth, stdin))
        return results[0] if len(results) == 1 else UNKNOWN_OUTPUT

    def pipeline(
        self, elements: list[Node], state: ShellState, depth: int, stdin: Stream
    ) -> Stream:
        current = stdin
        start = elements[0].start_byte if elements else 0
        span_text = self.resolver.span_text
        for index, element in enumerate(elements):
            if index == 0 and (tail := self.leading_list(element, state, depth, stdin)):
                body, redirects = tail
                output = self.commands.analyse(body, state.fork(), depth, current, redirects)
            else:
                output = self.statement(element, state.fork(), depth + 1, current)
            producer = span_text(start, element.end_byte)
            current = Stream(output.text, output.paths, "pipe", output.exact, producer)
        return current

    def leading_list(
        self, node: Node, state: ShellState, depth: int, stdin: Stream
    ) -> tuple[Node, list[Node]] | None:
        """``a && b 2>&1 | c``: the grammar hangs ``b``'s redirect on the whole ``a && b``
        and pipes the list, where bash runs ``a`` in this shell (its ``cd`` lasts) and pipes
        ``b`` alone. Runs ``a`` here and gives ``b`` with its redirects."""
        if node.type != "redirected_statement":
            return None
        body = node.child_by_field_name("body")
        if body is None or body.type != "list":
            return None
        operands = _flatten_list(body)
        if len(operands) < 2 or operands[-1].type != "command":
            return None
        for operand in operands[:-1]:
            self.statement(operand, state, depth + 1, stdin)
        return operands[-1], _redirect_nodes(node)

    def redirected(self, node: Node, state: ShellState, depth: int, stdin: Stream) -> Stream:
        body = node.child_by_field_name("body")
        redirect_nodes = _redirect_nodes(node)
        if body is not None and body.type == "command":
            return self.commands.analyse(body, state, depth, stdin, redirect_nodes)
        if body is not None and body.type == "list":
            # the grammar hangs a heredoc's redirects on the whole `a && b`; bash gives them to b
            operands = _flatten_list(body)
            if operands and operands[-1].type == "command":
                for operand in operands[:-1]:
                    self.statement(operand, state, depth + 1, stdin)
                return self.commands.analyse(operands[-1], state, depth, stdin, redirect_nodes)
        prepared = self.redirections.prepare(redirect_nodes, state, depth)
        output = UNKNOWN_OUTPUT
        if body is not None:
            for extra in prepared.extra_words:
                self.scan(extra, state, depth + 1)
            output = self.statement(body, state, depth + 1, prepared.stdin or stdin)
        self.redirections.emit_writes(prepared, "" if body is None else None)
        return self.continuations(prepared.continuations, output, state, depth)

    def continuations(
        self, nodes: list[Node], output: Stream, state: ShellState, depth: int
    ) -> Stream:
        """Commands the grammar nests inside a heredoc redirect (``cat <<EOF | sh``)."""
        for node in nodes:
            if node.type == "pipeline":
                output = self.pipeline(node.named_children, state, depth, output)
            else:
                output = self.statement(node, state, depth + 1, NO_INPUT)
        return output

    def for_loop(self, node: Node, state: ShellState, depth: int, stdin: Stream) -> None:
        variable = node.child_by_field_name("variable")
        body = node.child_by_field_name("body")
        words: list[Word] = []
        for value in node.children_by_field_name("value"):
            words.extend(self.resolver.resolve(value, state, depth))
        if body is None:
            return
        name = self.text(variable) if variable is not None else ""
        known = bool(words) and all(w.exact for w in words)
        if known and len(words) > MAX_EXPANSIONS:
            raise BudgetExhausted
        if not known:
            state.variables.pop(name, None)
            self.statement(body, state, depth, stdin)
            return
        for word in words:
            state.variables[name] = word.text
            self.statement(body, state, depth, stdin)

    def c_style_for(self, node: Node, state: ShellState, depth: int, stdin: Stream) -> None:
        for child in node.children:
            if child.type == "do_group" or child.type == "compound_statement":
                self.statement(child, state, depth, stdin)
            elif child.is_named:
                self.scan(child, state, depth)

    def assign(self, node: Node, state: ShellState, depth: int) -> None:
        """A persistent ``NAME=value``; an unknowable value makes ``NAME`` unknown."""
        name_node = node.child_by_field_name("name")
        value_node = node.child_by_field_name("value")
        if name_node is None:
            return
        if name_node.type != "variable_name":
            self.scan(node, state, depth + 1)
            name_node = name_node.child_by_field_name("name") or name_node
            state.variables.pop(self.text(name_node), None)
            return
        name = self.text(name_node)
        value = Word("")
        if value_node is not None:
            if value_node.type == "array":
                self.scan(value_node, state, depth + 1)
                value = Word("", exact=False)
            else:
                value = self.resolver.resolve_joined(value_node, state, depth + 1)
        if name.startswith("GIT_"):
            state.scratch.repos.clear()
        if value_node is not None and _TEMP_DIR.match(self.text(value_node)):
            state.temp_dir_names |= {name}
        else:
            state.temp_dir_names -= {name}
        appending = any(child.type == "+=" for child in node.children)
        previous = state.lookup(name) if appending else ""
        if value.exact and previous is not None:
            state.variables[name] = previous + value.text
        else:
            state.variables.pop(name, None)

    def declare(self, node: Node, state: ShellState, depth: int) -> None:
        self.builtin_exec(node)
        for child in node.named_children:
            if child.type == "variable_assignment":
                self.assign(child, state, depth)
            elif child.type != "variable_name":
                self.scan(child, state, depth + 1)

    def builtin_exec(self, node: Node) -> None:
        """The ``exec`` of ``export``/``declare``/``local``/``unset``, argv as written."""
        argv = tuple(self.text(child) for child in node.children)
        if argv:
            name = argv[0]
            self.run.emit(Effect("exec", argv0=name, argv=argv, command=self.text(node)))

    # Substitutions: the Substitutions protocol of the word resolver.

    def substitution(self, node: Node, state: ShellState, depth: int) -> None:
        if depth > MAX_NESTING:
            self.run.emit(gave_up(self.text(node)))
            return
        self.block(node, state.fork(), depth + 1, NO_INPUT)

    def scan(self, node: Node, state: ShellState, depth: int) -> None:
        """Analyse statements and substitutions anywhere below ``node``."""
        self.run.tick()
        if depth > MAX_NESTING:
            self.run.emit(gave_up(self.text(node)))
            return
        for child in node.named_children:
            kind = child.type
            if kind in _SUBSTITUTIONS:
                self.substitution(child, state, depth + 1)
            elif kind in _STATEMENT_TYPES:
                self.statement(child, state.fork(), depth + 1, NO_INPUT)
            elif child.named_child_count:
                self.scan(child, state, depth + 1)


_DOUBLE_OPEN = re.compile(rb"(?<!\$)\((?=\()")
_DOUBLE_CLOSE = re.compile(rb"\)(?=\))")


def _spaced_parentheses(source: bytes) -> bytes:
    """``source`` with ``((``/``))`` spaced apart, as bash reads a failed arithmetic command."""
    return _DOUBLE_CLOSE.sub(b") ", _DOUBLE_OPEN.sub(b"( ", source))


def _redirect_nodes(node: Node) -> list[Node]:
    return [
        child
        for index, child in enumerate(node.children)
        if node.field_name_for_child(index) == "redirect"
    ]


def _flatten_list(node: Node) -> list[Node]:
    """The operands of a chain of ``&&``/``||`` (left-nested in the tree) in order."""
    items: list[Node] = []
    stack = [node]
    while stack:
        current = stack.pop()
        if current.type == "list":
            stack.extend(reversed(current.named_children))
        else:
            items.append(current)
    return items


_STATEMENT_TYPES = frozenset(
    (
        "command",
        "redirected_statement",
        "pipeline",
        "list",
        "subshell",
        "compound_statement",
        "if_statement",
        "while_statement",
        "for_statement",
        "c_style_for_statement",
        "case_statement",
        "function_definition",
        "negated_command",
    )
)
