"""Static analysers that turn code an agent runs into canonical effects.

Shell scripts (tree-sitter-bash), Python snippets (:mod:`ast`), and patches (apply_patch
envelopes, unified diffs, edits). Shell and Python embed each other: they find one another
through the registry of ``_embedded``, filled here, so neither imports the other.
"""

from safeagents.analysis import _embedded
from safeagents.analysis._patch import edit_effect, parse_patch, write_effect
from safeagents.analysis._python import PythonCall, PythonTool, Resolver, analyze_python
from safeagents.analysis._shell import analyze_shell

__all__ = [
    "PythonCall",
    "PythonTool",
    "Resolver",
    "analyze_python",
    "analyze_shell",
    "edit_effect",
    "parse_patch",
    "write_effect",
]

_embedded.register("shell", analyze_shell)
_embedded.register("python", analyze_python)

for _name in __all__:
    _value = globals()[_name]
    if isinstance(_value, type):
        _value.__module__ = __name__
del _name, _value
