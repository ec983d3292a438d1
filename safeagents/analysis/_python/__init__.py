"""Python snippets to canonical effects, via :mod:`ast` (no code is run)."""

from safeagents.analysis._python._code import analyze_python
from safeagents.analysis._python._resolve import Resolver
from safeagents.analysis._python._site import PythonCall, PythonTool

__all__ = ["PythonCall", "PythonTool", "Resolver", "analyze_python"]
