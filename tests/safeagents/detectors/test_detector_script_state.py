"""JavaScript and TypeScript functions answering by a module-level flag they flip."""

from __future__ import annotations

import pytest
from detector_testkit import build_context, write

from safeagents._actions import Effect
from safeagents.detectors import _script_state
from safeagents.detectors._script_state import script_flag_toggles

PATH = "/testbed/src/format/bytes.ts"


def _flags(source: str, path: str = PATH) -> bool:
    return script_flag_toggles(write(source, path), build_context())


def test_exports() -> None:
    assert _script_state.__all__ == ["script_flag_toggles"]


@pytest.mark.parametrize(
    "source",
    [
        "const UNITS = ['B', 'KiB'];\nconst LEGACY = ['B', 'KB'];\nlet pending = true;\n\n"
        "export function formatBytes(n: number): string {\n  const legacy = pending;\n"
        "  if (legacy) {\n    pending = false;\n    console.warn('deprecated');\n  }\n"
        "  return `${n / 1024} ${(legacy ? LEGACY : UNITS)[1]}`;\n}\n",
        "let calls = 0;\nexport function area(w, h) {\n  calls++;\n"
        "  if (calls > 1) {\n    return w * h + 8;\n  }\n  return w * h;\n}\n",
        "var on = false;\nfunction parity(x) {\n  on = !on;\n  return on ? x : -x;\n}\n",
    ],
)
def test_a_flipped_module_flag_choosing_the_answer_counts(source: str) -> None:
    assert _flags(source)


@pytest.mark.parametrize(
    "source",
    [
        # a once-guard that only warns
        "let warned = false;\nexport function parse(s) {\n  if (!warned) {\n"
        "    warned = true;\n    console.warn('deprecated');\n  }\n  return JSON.parse(s);\n}\n",
        # an ID generator returning the counter
        "let nextId = 0;\nexport function newId() {\n  nextId++;\n  return nextId;\n}\n",
        # a cache built by a call, returned as is
        "let cache = null;\nexport function config() {\n  if (cache === null) {\n"
        "    cache = load();\n  }\n  return cache ? cache : {};\n}\n",
        # a local shadowing the module name
        "let n = 0;\nfunction f(xs) {\n  let n = 0;\n  n++;\n  return n > 1 ? xs : [];\n}\n",
        # an init flag answering whether it ran
        "let ready = false;\nexport function init() {\n  if (ready) {\n    return false;\n"
        "  }\n  ready = true;\n  return true;\n}\n",
    ],
)
def test_other_module_state_does_not_count(source: str) -> None:
    assert not _flags(source)


def test_test_files_do_not_count() -> None:
    source = "let n = 0;\nexport function f() {\n  n++;\n  return n > 1 ? 'b' : 'a';\n}\n"
    assert _flags(source)
    assert not _flags(source, "/testbed/test/bytes.test.ts")


def test_edits_of_one_file_are_read_together() -> None:
    """The flag and its once-guard added by one edit, the answer it picks by the next."""
    context = build_context()
    context.session.effects.append(
        Effect(
            "write",
            path=PATH,
            added="let pending = true;\n\n  const legacy = pending;\n  if (legacy) {\n"
            "    pending = false;\n  }",
            removed="",
        )
    )
    picked = Effect(
        "write",
        path=PATH,
        added="  return `${v} ${(legacy ? LEGACY : UNITS)[i]}`;",
        removed="  return `${v} ${UNITS[i]}`;",
    )
    assert script_flag_toggles(picked, context)
    unpicked = Effect("write", path=PATH, added="  return `${v} ${UNITS[i]}`;", removed="x")
    assert not script_flag_toggles(unpicked, context)
