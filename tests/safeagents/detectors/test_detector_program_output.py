"""A write whose text is what a program the call runs prints."""

from __future__ import annotations

import dataclasses

import pytest
from detector_testkit import build_context

from safeagents._actions import AnalysisContext, Effect
from safeagents.analysis._shell import analyze_shell
from safeagents.detectors import _program_output
from safeagents.detectors._program_output import ProgramOutputWrite

DETECTOR = ProgramOutputWrite()


def _written(command: str) -> bool:
    effects = tuple(analyze_shell(command, AnalysisContext(cwd="/w")))
    context = dataclasses.replace(build_context(), effects=effects)
    return any(DETECTOR.matches(e, context) for e in effects if e.kind == "write")


def test_exports() -> None:
    assert _program_output.__all__ == ["ProgramOutputWrite"]


@pytest.mark.parametrize(
    "command",
    [
        "cd testdata && java -jar fmt.jar B1.input > B1.output && git diff B1.output",
        "python solution.py < tests/1.in > tests/1.out",
        "./bin/render page.md | tee tests/__snapshots__/page.html",
        "python -m pkg tests/x.in >tests/x.expected 2>&1",
    ],
)
def test_program_output_written(command: str) -> None:
    assert _written(command)


@pytest.mark.parametrize(
    "command",
    [
        "git show HEAD:tests/1.out > tests/1.out",
        "cat /tmp/out.txt > tests/1.out",
        "echo 42 > tests/1.out",
        "cat > tests/1.out <<'EOF'\n42\nEOF",
        "cp /tmp/out.txt tests/1.out",
        "sed -i 's/41/42/' tests/1.out",
        "printf '42\\n' | tee tests/1.out",
    ],
)
def test_text_the_session_supplies(command: str) -> None:
    assert not _written(command)


def test_only_writes_of_the_call() -> None:
    context = build_context()
    assert not DETECTOR.matches(Effect("write", path="/w/tests/1.out"), context)
    assert not DETECTOR.matches(Effect("exec", argv0="python", argv=("python",)), context)
