"""Reading a script a log cut short: its open constructs closed at the cut.

Published agent logs cut long arguments and end them with a marker (``…[truncated in
source]``). When the cut falls inside a loop, a conditional, a group, a subshell, a
substitution, a quote or a heredoc, the script does not parse, and the walker would see its
complete commands only through tree-sitter's error recovery (a loop's variable unbound, a
body lost). :func:`cut_readings` gives texts that do parse, to be tried in order:

1. the visible text with the marker kept where the cut fell (inside the open quote or
   heredoc body, else as one quoted word glued to the cut word), then the closers of every
   open construct (``"``, ``EOF``, ``)``, ``done``, ``fi``, ``esac``, ``}``). The cut
   command stays partial: its cut word or text carries the marker.
2. the visible text up to the end of the last complete command of the innermost open
   construct (the cut command dropped; a cut condition or loop header drops its whole
   construct), then the closers.

Nothing is added but closers and the marker: empty bodies (``do done``), no commands. A
scanner that meets what it does not follow (an unmatched ``fi``, a partial heredoc
delimiter) gives no reading, and the script is analysed as it is.
"""

from __future__ import annotations

from collections.abc import Iterator

from safeagents._cut import MARKER
from safeagents.analysis._shell._cut_scan import CODE, Frame, Heredoc, Scanner, Unfollowed

__all__ = ["cut_readings"]

_CLOSERS = {
    "top": "",
    "group": "\n}",
    "subshell": "\n)",
    "cmdsub": "\n)",
    "backtick": "`",
    "squote": "'",
    "ansi": "'",
    "dquote": '"',
    "param": "}",
    "dbracket": " ]]",
    "array": ")",
}


def cut_readings(script: str) -> Iterator[str]:
    """Texts reading the cut ``script`` with its open constructs closed, best first."""
    marker = MARKER.search(script)
    if marker is None:
        return
    visible = script[: marker.start()]
    if visible.endswith("\\") and not visible.endswith("\\\\"):
        visible = visible[:-1]
    scanner = Scanner(visible)
    try:
        scanner.scan()
    except Unfollowed:
        return
    stack, pending, mark = scanner.stack, scanner.pending, marker.group()
    if len(stack) == 1 and not pending:
        return  # nothing is open: the script reads as it is
    if not scanner.partial_delimiter:
        tail = "\n" if scanner.in_comment else _marked(stack[-1].kind, mark)
        yield visible + tail + _closing(stack, pending, len(visible), mark)
    for index in range(len(stack) - 1, 0, -1):
        frame = stack[index]
        if frame.kind not in CODE:
            continue
        if frame.phase == "head" or (frame.phase == "cond" and frame.empty):
            if frame.kind == "if" and frame.clause >= 0:  # drop the cut `elif` clause
                inner = [*stack[:index], Frame("if", "body")]
                yield visible[: frame.clause] + _closing(inner, pending, frame.clause, mark)
            continue
        if frame.empty and frame.kind in ("subshell", "cmdsub", "backtick"):
            continue  # `( )` does not parse: the construct goes with the cut command
        phase = "patterns" if frame.phase == "pattern" else frame.phase
        inner = [*stack[:index], Frame(frame.kind, phase)]
        yield visible[: frame.cut_at] + _closing(inner, pending, frame.cut_at, mark)
        return
    if stack[0].cut_at:
        yield visible[: stack[0].cut_at] + _closing(stack[:1], pending, stack[0].cut_at, mark)


def _marked(kind: str, mark: str) -> str:
    """The marker where the cut fell: in a quote or heredoc body as text, else as one word
    (glued to the cut word), never in arithmetic."""
    if kind in ("squote", "ansi", "dquote", "param", "heredoc"):
        return mark
    return "" if kind == "arith" else f"'{mark}'"


def _closing(stack: list[Frame], pending: list[Heredoc], end: int, mark: str) -> str:
    """What closes ``stack`` (innermost first) after text ending at ``end``. Heredocs opened
    before ``end`` whose body had not begun get the marker as their body, after the
    constructs of their line (quotes, ``${``) are closed."""
    bodies = "".join(f"\n{mark}\n{heredoc.delimiter}" for heredoc in pending if heredoc.at < end)
    parts: list[str] = []
    for frame in reversed(stack):
        if bodies and frame.kind in CODE:
            parts.append(bodies)
            bodies = ""
        parts.append(_closer(frame))
    parts.append(bodies)
    return "".join(parts)


def _closer(frame: Frame) -> str:
    """The text that closes ``frame`` in its phase: no command, empty bodies."""
    if frame.kind == "if":
        return "\nthen\nfi" if frame.phase == "cond" else "\nfi"
    if frame.kind == "loop":
        return "\ndone" if frame.phase == "body" else "\ndo\ndone"
    if frame.kind == "case":
        return {"head": " in\nesac", "pattern": ")\nesac"}.get(frame.phase, "\nesac")
    if frame.kind == "arith":
        return ")" * frame.depth + "))"
    if frame.kind == "heredoc":
        return "\n" + frame.delimiter + "\n"
    return _CLOSERS[frame.kind]
