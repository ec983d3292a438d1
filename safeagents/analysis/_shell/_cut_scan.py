"""The scanner behind ``_cut``: which constructs of a visible shell text are open at its end.

A light, linear reading of bash's syntax (quotes, substitutions, heredocs, the reserved words
of compound commands at the command position), enough to close what is open. It raises
:class:`Unfollowed` on what it does not follow, and the script is then read as it is.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["CODE", "Frame", "Heredoc", "Scanner", "Unfollowed"]

MAX_FRAMES = 64
"""Open constructs followed at most; deeper scripts get no reading."""

_TOKEN = re.compile(
    r"(?P<space>[ \t]+|\\\n)"
    r"|(?P<newline>\n)"
    r"|(?P<op>;;&|;;|;&|;|&&|\|\||\|&|&>>|&>|&|\|)"
    r"|(?P<herestring><<<)"
    r"|(?P<heredoc><<-?)"
    r"|(?P<procsub>[<>]\()"
    r"|(?P<redirect>>>|>&|>\||<&|<>|>|<)"
    r"|(?P<open>\(\(|\()"
    r"|(?P<close>\))"
    r"|(?P<dollar>\$\(\(|\$\(|\$\{|\$'|\$\")"
    r"|(?P<quote>['\"`])"
    r"|(?P<word>(?:[^\s;&|()<>'\"`$\\]|\\.|\$(?![({'\"]))+)",
    re.DOTALL,
)
_STOPS = {
    "dquote": re.compile(r'["\\$`]'),
    "param": re.compile(r"[}\\$`'\"]"),
    "arith": re.compile(r"[()\\$`]"),
}
_DOLLAR = {
    "((": ("arith", 3),
    "(": ("cmdsub", 2),
    "{": ("param", 2),
    "'": ("ansi", 2),
    '"': ("dquote", 2),
}
_DELIMITER = re.compile(r"[ \t]*((?:[^\s;&|()<>'\"\\]+|'[^']*'|\"[^\"]*\"|\\.)+)")
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\[[^\]]*\])?\+?=")
CODE = frozenset(("top", "group", "subshell", "cmdsub", "backtick", "if", "loop", "case"))


class Unfollowed(Exception):
    """The scanner met something it does not follow."""


@dataclass(slots=True)
class Frame:
    kind: str
    phase: str = ""
    cut_at: int = 0
    """Code frames: where the text up to the last complete command of this phase ends."""
    empty: bool = True
    """No complete command in this phase yet."""
    clause: int = -1
    """``if``: where the open ``elif`` clause begins."""
    delimiter: str = ""
    depth: int = 0


@dataclass(frozen=True, slots=True)
class Heredoc:
    delimiter: str
    strip_tabs: bool
    at: int


class Scanner:
    """Follows the open constructs of a visible text, token by token."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.stack = [Frame("top")]
        self.pending: list[Heredoc] = []
        self.partial_delimiter = False
        self.in_comment = False
        self.command_position = True
        self.after_operator = False
        self.expect_body = False
        self.naming = False
        self.assigned = False
        """An assignment stands at the command position: a complete command by itself."""
        self.redirect_target = False
        self.glued_end = -1
        """Where the last word part ended: a part starting there continues that word."""

    def push(self, frame: Frame) -> None:
        if len(self.stack) >= MAX_FRAMES:
            raise Unfollowed
        self.stack.append(frame)

    def pop(self, *kinds: str) -> Frame:
        if len(self.stack) < 2 or self.stack[-1].kind not in kinds:
            raise Unfollowed
        return self.stack.pop()

    def scan(self) -> None:
        position, length = 0, len(self.text)
        while position < length:
            kind = self.stack[-1].kind
            if kind in ("squote", "ansi"):
                position = self._single(position)
            elif kind in _STOPS:
                position = self._text(position)
            else:
                position = self._code(position)

    # Text frames.

    def _single(self, position: int) -> int:
        text = self.text
        if self.stack[-1].kind == "ansi":
            index = position
            while index < len(text) and text[index] != "'":
                index += 2 if text[index] == "\\" else 1
            found = index if index < len(text) else -1
        else:
            found = text.find("'", position)
        if found < 0:
            return len(text)
        self.stack.pop()
        self.glued_end = found + 1
        return found + 1

    def _text(self, position: int) -> int:
        """Inside ``"…"``, ``${…}`` or ``$((…))``: to its end or the next nested construct."""
        frame = self.stack[-1]
        stop = _STOPS[frame.kind].search(self.text, position)
        if stop is None:
            return len(self.text)
        char, at = stop.group(), stop.start()
        if char == "\\":
            return at + 2
        if char == "$":
            return self._dollar(at)
        if char == "`":
            self._open_code(Frame("backtick"), at + 1)
            return at + 1
        if frame.kind == "arith":
            return self._arith(frame, char, at)
        if (char == '"' and frame.kind == "dquote") or (char == "}" and frame.kind == "param"):
            self.stack.pop()
            self.glued_end = at + 1
            return at + 1
        self.push(Frame("dquote" if char == '"' else "squote"))  # a quote inside ``${…}``
        return at + 1

    def _arith(self, frame: Frame, char: str, at: int) -> int:
        if char == "(":
            frame.depth += 1
            return at + 1
        if frame.depth:
            frame.depth -= 1
            return at + 1
        if self.text[at + 1 : at + 2] != ")":
            raise Unfollowed
        self.stack.pop()
        self.glued_end = at + 2
        return at + 2

    def _dollar(self, at: int) -> int:
        """``$((``, ``$(``, ``${``, ``$'`` or ``$"`` at ``at`` (else a plain ``$``)."""
        follow = self.text[at + 1 : at + 3]
        kind, size = _DOLLAR.get(follow) or _DOLLAR.get(follow[:1], ("", 1))
        if kind == "cmdsub":
            self._open_code(Frame(kind), at + size)
        elif kind:
            self.push(Frame(kind))
        return at + size

    def _open_code(self, frame: Frame, after: int) -> None:
        frame.cut_at = after
        self.push(frame)
        self.command_position = True

    # Code frames.

    def _code(self, position: int) -> int:
        text = self.text
        glued = position == self.glued_end
        frame = self.stack[-1]
        if text[position] == "#" and not glued and frame.kind != "dbracket":
            newline = text.find("\n", position)
            if newline < 0:
                self.in_comment = True
                return len(text)
            return newline
        match = _TOKEN.match(text, position)
        if match is None:
            raise Unfollowed
        group, token, end = match.lastgroup, match.group(), match.end()
        if group == "space":
            return end
        if group == "newline":
            return self._newline(end)
        if frame.kind in ("dbracket", "array") or frame.phase in ("patterns", "pattern"):
            return self._listed(match, frame, glued)
        if group == "op":
            self._operator(token, position, end)
        elif group in ("herestring", "redirect"):
            self.redirect_target = True
        elif group == "heredoc":
            return self._heredoc_operator(position, end, token == "<<-")
        elif group == "procsub":
            self._word_part(glued)
            self._open_code(Frame("cmdsub"), end)
        elif group == "open":
            return self._open(token, position, end, glued)
        elif group == "close":
            self.pop("subshell", "cmdsub")
            self.command_position = False
            self.glued_end = end
        elif group == "dollar":
            self._word_part(glued)
            return self._dollar(position)
        elif group == "quote":
            self._quote(token, end, glued)
        else:
            self._word(token, position, end, glued)
        return end

    def _newline(self, end: int) -> int:
        if self.pending:
            end = self._heredoc_bodies(end)
        frame = self.stack[-1]
        if frame.kind in CODE:
            if not self.after_operator and self._ended():
                self._complete(frame, end)
            self.command_position = True
        return end

    def _ended(self) -> bool:
        """Whether a command stands before the separator just read (and forget assignments)."""
        ended = not self.command_position or self.assigned
        self.assigned = False
        return ended

    @staticmethod
    def _complete(frame: Frame, end: int) -> None:
        """A command of ``frame`` ends at ``end`` (after a separator)."""
        if frame.phase in ("", "cond", "body", "item"):
            frame.cut_at, frame.empty = end, False

    def _operator(self, token: str, start: int, end: int) -> None:
        frame = self.stack[-1]
        self.redirect_target = False
        if token in ("&>", "&>>"):
            self.redirect_target = True
            return
        if token in (";;", ";&", ";;&"):
            if frame.kind != "case" or frame.phase != "item":
                raise Unfollowed
            frame.phase, frame.cut_at, frame.empty = "patterns", end, True
        elif token in ("&&", "||", "|", "|&"):
            if self._ended() and frame.phase in ("", "cond", "body", "item"):
                frame.cut_at, frame.empty = start, False  # the left side is complete
            self.after_operator = True
            self.command_position = True
            return
        elif self._ended():
            self._complete(frame, end)
        self.after_operator = False
        self.command_position = True

    def _listed(self, match: re.Match[str], frame: Frame, glued: bool) -> int:
        """A token inside ``[[ ]]``, an array or a ``case`` pattern list: words, not commands."""
        group, token, end = match.lastgroup, match.group(), match.end()
        if group == "dollar":
            return self._dollar(match.start())
        if group == "quote":
            self._quote(token, end, True)
        elif group == "heredoc" or group == "procsub":
            raise Unfollowed
        elif frame.kind == "dbracket":
            if token == "]]" and not glued and end < len(self.text):
                self.stack.pop()
        elif frame.kind == "array":
            if group == "close":
                self.stack.pop()
        elif group == "close":
            frame.phase, frame.cut_at, frame.empty = "item", end, True
            self.command_position = True
        elif token == "esac" and frame.phase == "patterns" and end < len(self.text):
            self.stack.pop()
            self.command_position = False
        elif group == "word":
            frame.phase = "pattern"
        self.glued_end = end
        return end

    def _open(self, token: str, start: int, end: int, glued: bool) -> int:
        frame = self.stack[-1]
        if token == "((" and not glued and (self.command_position or frame.phase == "head"):
            self.push(Frame("arith"))
            return end
        if self.command_position and not glued:
            self._open_code(Frame("subshell"), start + 1)
            return start + 1
        if glued and self.text[start - 1] == "=":  # `name=(a b)`, `declare -a name=(…)`
            self.push(Frame("array"))
            return start + 1
        after = self.text[start + 1 :].lstrip(" \t")
        if glued and after.startswith(")"):  # `name()`: a function's body follows
            self.command_position = self.expect_body = True
            return len(self.text) - len(after) + 1
        raise Unfollowed

    def _quote(self, token: str, end: int, glued: bool) -> None:
        if token == "`" and self.stack[-1].kind == "backtick":
            self.stack.pop()
            self.command_position = False
            self.glued_end = end
            return
        self._word_part(glued)
        if token == "`":
            self._open_code(Frame("backtick"), end)
        else:
            self.push(Frame("squote" if token == "'" else "dquote"))

    def _word_part(self, glued: bool) -> None:
        """A quote or substitution begins a word: the command's name, unless it continues one."""
        if not glued and not self.redirect_target:
            self.command_position = False
        self.redirect_target = self.after_operator = False

    def _word(self, word: str, start: int, end: int, glued: bool) -> None:
        self.after_operator = False
        self.glued_end = end
        frame = self.stack[-1]
        if glued:
            return
        if self.redirect_target or self.naming:
            self.redirect_target = False
            if self.naming:  # `function name`
                self.naming, self.expect_body, self.command_position = False, True, True
            return
        if end == len(self.text):  # the cut word: no keyword
            self.command_position = False
            return
        if frame.kind == "case" and frame.phase == "head":
            if word == "in":
                frame.phase, frame.cut_at, frame.empty = "patterns", end, True
            return
        if not (self.command_position or self.expect_body):
            return
        self.expect_body = False
        keyword = _KEYWORDS.get(word)
        if keyword is not None:
            keyword(self, frame, start, end)
        elif _ASSIGNMENT.match(word):
            self.assigned = True
        elif word not in ("!", "time"):
            self.command_position = False

    # Keywords: (scanner, innermost frame, start, end).

    def _if(self, frame: Frame, start: int, end: int) -> None:
        self._open_code(Frame("if", "cond"), end)

    def _elif(self, frame: Frame, start: int, end: int) -> None:
        self._phase(frame, "if", ("body",), "cond", end)
        frame.clause = start

    def _then(self, frame: Frame, start: int, end: int) -> None:
        self._phase(frame, "if", ("cond",), "body", end)
        frame.clause = -1

    def _else(self, frame: Frame, start: int, end: int) -> None:
        self._phase(frame, "if", ("body",), "body", end)

    def _do(self, frame: Frame, start: int, end: int) -> None:
        self._phase(frame, "loop", ("head", "cond"), "body", end)

    def _phase(self, frame: Frame, kind: str, after: tuple[str, ...], phase: str, end: int) -> None:
        if frame.kind != kind or frame.phase not in after:
            raise Unfollowed
        frame.phase, frame.cut_at, frame.empty = phase, end, True
        self.command_position = True

    def _end(self, frame: Frame, start: int, end: int) -> None:
        """``fi``, ``done``, ``esac``, ``}``."""
        kind, phase = _ENDS[self.text[start:end]]
        if frame.kind != kind or frame.phase != phase:
            raise Unfollowed
        self.stack.pop()
        self.command_position = False

    def _loop(self, frame: Frame, start: int, end: int) -> None:
        if self.text[start:end] in ("while", "until"):
            self._open_code(Frame("loop", "cond"), end)
        else:
            self.push(Frame("loop", "head"))
            self.command_position = False

    def _case(self, frame: Frame, start: int, end: int) -> None:
        """``case`` (its subject and ``in`` follow) or ``[[`` (words to ``]]``)."""
        self.push(Frame("case", "head") if self.text[start:end] == "case" else Frame("dbracket"))
        self.command_position = False

    def _group(self, frame: Frame, start: int, end: int) -> None:
        self._open_code(Frame("group"), end)

    def _function(self, frame: Frame, start: int, end: int) -> None:
        self.naming = True
        self.command_position = False

    # Heredocs.

    def _heredoc_operator(self, start: int, end: int, strip_tabs: bool) -> int:
        match = _DELIMITER.match(self.text, end)
        if match is None or match.end() == len(self.text):
            if "\n" in self.text[end:]:
                raise Unfollowed
            self.partial_delimiter = True  # cut in the delimiter: the command is cut
            return len(self.text)
        delimiter = _UNQUOTE.sub(lambda found: found.group(1) or "", match.group(1))
        self.pending.append(Heredoc(delimiter, strip_tabs, start))
        self.glued_end = match.end()
        return match.end()

    def _heredoc_bodies(self, position: int) -> int:
        """Skip the bodies of the heredocs of the line that just ended."""
        text = self.text
        for index, heredoc in enumerate(self.pending):
            tabs = r"\t*" if heredoc.strip_tabs else ""
            line = re.compile(f"^{tabs}{re.escape(heredoc.delimiter)}$", re.MULTILINE)
            found = line.search(text, position)
            if found is None:
                self.push(Frame("heredoc", delimiter=heredoc.delimiter))
                self.pending = self.pending[index + 1 :]
                return len(text)
            position = min(found.end() + 1, len(text))
        self.pending = []
        return position


_UNQUOTE = re.compile(r"\\(.)|['\"]")
_ENDS = {
    "fi": ("if", "body"),
    "done": ("loop", "body"),
    "esac": ("case", "item"),
    "}": ("group", ""),
}
_KEYWORDS = {
    "if": Scanner._if,
    "elif": Scanner._elif,
    "then": Scanner._then,
    "else": Scanner._else,
    "fi": Scanner._end,
    "for": Scanner._loop,
    "select": Scanner._loop,
    "while": Scanner._loop,
    "until": Scanner._loop,
    "do": Scanner._do,
    "done": Scanner._end,
    "case": Scanner._case,
    "esac": Scanner._end,
    "{": Scanner._group,
    "}": Scanner._end,
    "function": Scanner._function,
    "[[": Scanner._case,
}
