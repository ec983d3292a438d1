"""The tree-sitter-bash parser, created lazily once per thread (a Parser is not thread-safe)."""

from __future__ import annotations

import threading

from tree_sitter import Language, Parser, Tree

_local = threading.local()
_ASCII_ONLY = bytes(range(128)) + b"x" * 128
"""Maps every byte of a multi-byte UTF-8 character to ``x``.

tree-sitter-bash 0.25 crashes at random on some non-ASCII characters after ``{``
(``{\\U000ca54d``). Bash gives no non-ASCII character a meaning: all are word characters,
as ``x`` is, so the tree keeps its shape and byte offsets; the walker reads the real text.
"""


def parser_input(source: bytes) -> bytes:
    """``source`` as the parser is given it (see :data:`_ASCII_ONLY`)."""
    return source if source.isascii() else source.translate(_ASCII_ONLY)


def parse(source: bytes) -> Tree:
    """Parse ``source``; tree-sitter recovers from any syntax error and never raises on text."""
    parser: Parser | None = getattr(_local, "parser", None)
    if parser is None:
        import tree_sitter_bash

        parser = Parser(Language(tree_sitter_bash.language()))
        _local.parser = parser
    return parser.parse(parser_input(source))
