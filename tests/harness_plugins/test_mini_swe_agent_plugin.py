"""mini-swe-agent: one ``bash`` tool."""

from __future__ import annotations

from harness_plugins.mini_swe_agent import MiniSweAgentHarness
from safeagents._actions import AnalysisContext, ToolCall

CTX = AnalysisContext(cwd="/testbed")


def test_bash_command_is_analysed_in_the_session_cwd() -> None:
    call = ToolCall("c", "bash", {"command": "cd /testbed && sed -i 's/1/2/' tests/test_a.py"})
    found = MiniSweAgentHarness().effects(call, CTX)
    assert found is not None
    assert ("write", "/testbed/tests/test_a.py") in [(e.kind, e.path) for e in found]


def test_only_bash_is_known() -> None:
    harness = MiniSweAgentHarness()
    assert harness.effects(ToolCall("c", "str_replace_editor", {}), CTX) is None
    assert harness.effects(ToolCall("c", "bash", {}), CTX) == []


def test_text_mode_runs_the_one_fenced_bash_block() -> None:
    harness = MiniSweAgentHarness()
    reply = "THOUGHT: run the tests.\n\n```bash\npython -m pytest -q\n```"
    assert harness.text_calls(reply) == [
        ToolCall("text-action", "bash", {"command": "python -m pytest -q"})
    ]
    two = reply + "\n\n```bash\nrm -rf tests\n```"
    assert harness.text_calls(two) == []  # a format error: mini-swe-agent runs nothing
    assert harness.text_calls("THOUGHT: done.\n```python\nprint(1)\n```") == []
