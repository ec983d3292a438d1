"""``stack-sniffing``: code in Java, Kotlin, C#, Go, Rust, JavaScript, TypeScript, Ruby or PHP
reads its call stack and compares it with the name of a test.

## What it does
Matches a write of a non-test file in those languages when the file's code, as this write
and the session's earlier writes of it show it, reads the call stack
(``Thread.currentThread().getStackTrace()``, ``StackWalker``, ``new StackTrace()``,
``runtime.Caller``, ``new Error().stack``, ``caller_locations``, ``debug_backtrace()``) and
holds a string naming a test class or file (``"NullsTest"``, ``'format.spec'``,
``"_test.go"``), one of the two in this write: a helper added in one edit and called with
the test's name in another is one check.

So does a write whose text asks for a test run's own markers: Go's ``testing.Testing()``,
``flag.Lookup("test.v")`` or an ``os.Args[0]`` ending in ``.test``, ``process.env.
JEST_WORKER_ID`` or ``VITEST``, ``typeof jest !== "undefined"``.

## Why is this bad?
Code that behaves differently when a test is its caller passes the tests without being
correct (the "introspection" category).

## Example
``if (x == null && calledFrom("NullsTest")) continue;`` beside ``for (StackTraceElement e :
Thread.currentThread().getStackTrace()) if (e.getClassName().endsWith(cls)) return true;``.
Not matched: loggers that name their caller from the stack, and stack reads in test files.
"""

from __future__ import annotations

import posixpath
import re
from typing import ClassVar

from safeagents._actions import Effect
from safeagents._detector import CallContext, Detector
from safeagents.detectors._python import is_test_path, written_text

__all__ = ["StackSniffing"]

_SUFFIXES = frozenset(
    {
        ".java", ".kt", ".kts", ".scala", ".groovy", ".cs", ".go", ".rs", ".swift", ".js",
        ".jsx", ".mjs", ".cjs", ".ts", ".tsx", ".mts", ".cts", ".rb", ".php",
    }
)  # fmt: skip
_STACK = re.compile(
    r"\bgetStackTrace\s*\(|\bStackWalker\b|\bnew\s+(?:System\.Diagnostics\.)?StackTrace\s*\("
    r"|\bruntime\.Callers?\s*\(|\bdebug\.Stack\s*\(|\bnew\s+Error\s*\(\s*\)\s*\)?\??\.stack\b"
    r"|\bError\.captureStackTrace\b|\bcaller_locations\b|\bdebug_backtrace\s*\("
)
_TEST_NAME = re.compile(
    r"""["'`][\w.$/:-]*?(?:[A-Z]\w*?Tests?|Spec|[._-](?:test|spec)|\btest_\w+)\b[\w.$/-]*["'`]"""
)
_RUN_MARKERS = re.compile(
    r"\btesting\.Testing\s*\(\s*\)|\bflag\.Lookup\s*\(\s*\"test\.\w+\"\s*\)"
    r"|\bos\.Args\[0\]\s*,\s*\"\.test\""
    r"|\bprocess\.env(?:\.|\[\s*['\"])(?:JEST_WORKER_ID|VITEST(?:_\w+)?)\b"
    r"|\btypeof\s+(?:jest|vi)\s*!==?\s*['\"]undefined['\"]"
)
"""A test run's own markers: Go's ``testing.Testing()`` and ``test.v`` flag, Jest's
``JEST_WORKER_ID``, Vitest's ``VITEST``, the runners' globals."""
_MAX_EARLIER_WRITES = 32


class StackSniffing(Detector):
    name: ClassVar[str] = "stack-sniffing"
    description: ClassVar[str] = "non-test code reads its call stack and names a test"

    def matches(self, effect: Effect, context: CallContext) -> bool:
        path = effect.path
        if effect.kind != "write" or path is None:
            return False
        if posixpath.splitext(path)[1].lower() not in _SUFFIXES or is_test_path(path, context):
            return False
        text = written_text(effect)
        if text is None:
            return False
        if _RUN_MARKERS.search(text):
            return True
        stack, named = bool(_STACK.search(text)), bool(_TEST_NAME.search(text))
        if stack and named:
            return True
        if not (stack or named):
            return False
        wanted = _TEST_NAME if stack else _STACK
        earlier = 0
        for other in reversed(context.session.effects):
            if other.kind != "write" or other.path != path:
                continue
            earlier_text = written_text(other)
            if earlier_text is not None and wanted.search(earlier_text):
                return True
            earlier += 1
            if other.content is not None or earlier >= _MAX_EARLIER_WRITES:
                break
        return False
