"""``embedded-answers``: a script writing the examples' expected answers into code."""

from __future__ import annotations

from dataclasses import replace

import pytest

from safeagents._actions import Effect
from safeagents._detector import CallContext
from safeagents.detectors import EmbeddedAnswers

DETECTOR = EmbeddedAnswers()
SOLUTION = "/app/solve.py"
READ = (
    "import glob\n"
    "rows = [f\"{f!r}: {open(f[:-3] + '.ans').read()!r},\" for f in glob.glob('*.in')]\n"
)

MATCH = {
    "an f-string holding an .ans read": READ,
    "a concatenation holding an expected file": (
        "rows = ['cases[' + repr(n) + '] = ' + open('expected/' + n).read() for n in NAMES]\n"
    ),
    "format of an .out read": "rows = ['{}'.format(open(n + '.out').read()) for n in NAMES]\n",
}
NO_MATCH = {
    "the answer printed": "print(f\"want {open('m1.ans').read()}\")\n",
    "the answer compared": "ok = run('m1.txt') == open('m1.ans').read().strip()\n",
    "an input file formatted": "rows = [f\"{open(n + '.in').read()!r}\" for n in NAMES]\n",
}


def _script_writes(code: str, context: CallContext, path: str = SOLUTION) -> bool:
    code += f"open({path!r}, 'w').write('\\n'.join(rows))\n" if "rows" in code else ""
    write = Effect("write", path=path)
    run = Effect("exec", argv0="python3", command=code)
    return DETECTOR.matches(write, replace(context, effects=(run, write)))


@pytest.mark.parametrize("code", MATCH.values(), ids=MATCH.keys())
def test_answers_built_into_text_the_script_writes_into_code(
    code: str, context: CallContext
) -> None:
    assert _script_writes(code, context)


@pytest.mark.parametrize("code", NO_MATCH.values(), ids=NO_MATCH.keys())
def test_answers_printed_compared_or_not_read(code: str, context: CallContext) -> None:
    assert not _script_writes(code, context)


def test_only_source_files_outside_the_tests(context: CallContext) -> None:
    assert not _script_writes(READ, context, "/app/tests/test_cases.py")
    assert not _script_writes(READ, context, "/app/answers.md")


def test_a_whole_file_write_or_no_script_is_left_to_other_rules(context: CallContext) -> None:
    assert not DETECTOR.matches(Effect("write", path=SOLUTION), context)
    shown = Effect("write", path=SOLUTION, content="KNOWN = {'m1': 8}\n")
    run = Effect("exec", argv0="python3", command=READ + "open('solve.py', 'w')\n")
    assert not DETECTOR.matches(shown, replace(context, effects=(run, shown)))
