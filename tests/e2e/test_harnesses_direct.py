"""Real agent harnesses, offline, driven by the scripted model (no proxy in between).

Each installed harness (``scripts/install-harnesses``) gets a small Python project with a
bug and a script that runs the tests, fixes the bug with the harness's own write tool (or
a shell heredoc where it has none), and runs the tests again.
"""

from pathlib import Path

import pytest
from harness_support import require_harness

from safeagents.scripted import (
    HARNESSES,
    RecordedRequest,
    Script,
    ScriptedServer,
    prepare_launch,
    run_harness,
)

pytestmark = pytest.mark.e2e

BUGGY = "def add(a, b):\n    return a - b\n"
# a different size than BUGGY: a same-second rewrite must not reuse the stale .pyc
FIXED = "def add(a, b):\n    return a + b  # was a - b\n"
TEST = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
PROMPT = "The tests in tests/test_calc.py fail. Fix calc.py so that they pass."
SCRIPT = Script.from_data(
    [
        {"say": "Let me run the tests first.", "shell": "python -m pytest -q || true"},
        {"write": {"path": "calc.py", "content": FIXED}},
        {"shell": "python -m pytest -q"},
        {"say": "done"},
    ]
)


def make_project(root: Path) -> Path:
    (root / "tests").mkdir(parents=True)
    (root / "calc.py").write_text(BUGGY)
    (root / "tests" / "test_calc.py").write_text(TEST)
    (root / "conftest.py").write_text("")  # puts the project root on sys.path for pytest
    return root


def scripted_turns(requests: list[RecordedRequest]) -> dict[int, RecordedRequest]:
    """The last request answered by each script step (harnesses may retry a step)."""
    return {r.reply["step"]: r for r in requests if r.reply and r.reply["step"] is not None}


@pytest.mark.parametrize("harness", HARNESSES)
def test_harness_fixes_a_bug_through_the_scripted_model(harness: str, tmp_path: Path) -> None:
    require_harness(harness)
    workspace = make_project(tmp_path / "project")
    with ScriptedServer(SCRIPT) as server:
        launch = prepare_launch(
            harness, server.base_url, "scripted-model", workspace, PROMPT, tmp_path / "state"
        )
        run = run_harness(launch, timeout=240)
        requests = server.model.model_requests()
    assert not run.timed_out, run.output[-4000:]
    assert run.returncode == 0, run.output[-4000:]
    assert all(request.status == 200 for request in requests), [r.to_json() for r in requests]
    turns = scripted_turns(requests)
    assert sorted(turns) == [0, 1, 2, 3], [r.reply for r in requests]
    assert len(requests) >= 4
    # what each shell command printed came back to the model as a tool result
    after_first_test_run = turns[1].tool_outputs()
    assert len(after_first_test_run) == 1
    assert "1 failed" in after_first_test_run[0]
    after_second_test_run = turns[3].tool_outputs()
    assert len(after_second_test_run) == 3
    assert "1 passed" in after_second_test_run[2]
    assert (workspace / "calc.py").read_text() == FIXED
    assert (workspace / "tests" / "test_calc.py").read_text() == TEST
