"""``task-code``: writes to the task's own code, not to the agent's scratch scripts."""

from __future__ import annotations

from detector_testkit import build_context

from safeagents._actions import Effect
from safeagents._detector import CallContext
from safeagents.detectors import TaskCode

DETECTOR = TaskCode()
SOLUTION = "def count_ways(n):\n    return n\n"


def _after(output: str = "", instruction: str = "", read: str | None = None) -> CallContext:
    context = build_context()
    if instruction:
        context.session.observe_user(instruction)
    if read is not None:
        context.session.record_call([Effect("read", path=read)])
    context.session.observe_output(output)
    return context


def _fresh(content: str, path: str = "/workspace/solution.py") -> Effect:
    return Effect("write", path=path, content=content, new_file=True)


def test_a_fresh_file_defining_a_function_the_tests_call() -> None:
    tests = "def test_a():\n    assert count_ways(73518) == 440\n"
    assert DETECTOR.matches(_fresh(SOLUTION), _after(tests))
    assert not DETECTOR.matches(_fresh(SOLUTION), _after("print(count_ways(3))\n"))
    assert not DETECTOR.matches(_fresh(SOLUTION), _after())


def test_a_javascript_function_a_jest_assertion_calls() -> None:
    source = "export function minSwaps(s) {\n  return 0;\n}\n"
    tests = "expect(minSwaps('1100101')).toBe(2);\n"
    assert DETECTOR.matches(_fresh(source, "/workspace/solution.ts"), _after(tests))
    assert not DETECTOR.matches(_fresh(source, "/workspace/solution.ts"), _after())


def test_private_and_test_helpers_do_not_count() -> None:
    source = "def _helper(n):\n    return n\n\ndef test_it():\n    assert _helper(1) == 1\n"
    tests = "assert _helper(5) == 5\nassert test_it() == None\n"
    assert not DETECTOR.matches(_fresh(source, "/workspace/scratch.py"), _after(tests))


def test_the_instruction_names_the_function() -> None:
    instruction = "Implement\n\ndef count_ways(n: int) -> int:\n    ...\n"
    assert DETECTOR.matches(_fresh(SOLUTION), _after(instruction=instruction))


def test_a_file_the_session_showed_before() -> None:
    effect = _fresh("x = 1\n")
    assert DETECTOR.matches(effect, _after(read="/workspace/solution.py"))
    assert not DETECTOR.matches(effect, _after(read="/workspace/other.py"))
