"""Literals in Python source, and which ones look like test inputs worth a second look."""

from __future__ import annotations

import ast
import math

__all__ = [
    "TRIVIAL",
    "character_keys",
    "is_distinctive",
    "is_input_like",
    "is_interesting",
    "is_searchable",
    "literal_text",
]

TRIVIAL = frozenset({"0", "1", "2", "-1", "True", "False", "None", ""})
"""Literals of base cases, as :func:`literal_text` writes them."""
_MAX_DECIMAL_BITS = 12_000
"""Python refuses to print ints of more than 4300 digits (about 14000 bits) in decimal."""


def literal_text(node: ast.AST) -> str | None:
    """A canonical text of a constant (or tuple/list of constants), else ``None``."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        inner = literal_text(node.operand)
        return None if inner is None else ("-" if isinstance(node.op, ast.USub) else "") + inner
    if isinstance(node, ast.Constant):
        value = node.value
        if isinstance(value, int) and value.bit_length() > _MAX_DECIMAL_BITS:
            return hex(value)
        return value if isinstance(value, str) else repr(value)
    if isinstance(node, ast.Tuple | ast.List | ast.Set) and node.elts:
        parts = [literal_text(element) for element in node.elts]
        return None if None in parts else "(" + ", ".join(p or "" for p in parts) + ")"
    return None


def character_keys(keys: list[ast.expr | None]) -> bool:
    """Keys all strings of at most one character: a table over an alphabet (digits to their
    segment counts, letters to scores), read a character at a time, not a table of cases."""
    return all(
        isinstance(key, ast.Constant) and isinstance(key.value, str) and len(key.value) <= 1
        for key in keys
    )


def is_interesting(node: ast.AST) -> bool:
    """Looks like a test input: a big number, a 2+ character string, a constant tuple, or a
    float spelt to 12+ significant digits (``12.299999999999999``, a rounding error copied
    from an output; ``0.5`` or ``3.25`` are not)."""
    if isinstance(node, ast.UnaryOp):
        node = node.operand
    if isinstance(node, ast.Constant):
        value = node.value
        if isinstance(value, bool) or value is None:
            return False
        if isinstance(value, float) and _long_fraction(value):
            return True
        if isinstance(value, int | float):
            return abs(value) >= 1000
        return isinstance(value, str | bytes) and len(value) >= 2
    if isinstance(node, ast.Tuple | ast.List):
        return len(node.elts) >= 2 and literal_text(node) is not None
    return False


_FLOAT_DIGITS = 12


def _long_fraction(value: float) -> bool:
    if not math.isfinite(value) or value.is_integer():
        return False
    digits = repr(abs(value)).split("e")[0].replace(".", "").lstrip("0")
    return len(digits) >= _FLOAT_DIGITS


def is_input_like(node: ast.AST) -> bool:
    """A big number, a string with digits or spaces (``"5 3"``), or a tuple of constants."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str | bytes):
        text = node.value.decode("latin-1") if isinstance(node.value, bytes) else node.value
        return any(c.isdigit() or c.isspace() for c in text)
    return is_interesting(node)


def is_searchable(node: ast.AST) -> bool:
    """Distinctive enough to look for in outputs: a 1000+ number or a 3+ character string."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return len(node.value.strip()) >= 3
    return is_interesting(node)


def is_distinctive(atoms: list[str]) -> bool:
    """Inputs that pick out a test case rather than a base case: one number of 10 or more
    (or a string of 3+ characters), or several inputs of which one is beyond 0-3."""

    def size(atom: str) -> int:
        digits = atom.lstrip("-")
        return int(digits) if digits.isdigit() else (100 if len(atom) >= 3 else 0)

    sizes = [size(atom) for atom in atoms if atom not in TRIVIAL]
    return any(value >= 10 for value in sizes) or (len(atoms) >= 2 and any(v > 3 for v in sizes))
