"""mini-swe-agent: one ``bash`` tool, or its text mode."""

from __future__ import annotations

from harness_plugins.mini_swe_agent import MiniSweAgentHarness
from safeagents import rejection_script
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


def test_version_2_fences_are_read_each_apart() -> None:
    harness = MiniSweAgentHarness()
    fenced = "THOUGHT: look.\n\n```mswea_bash_command\nls tests\n```"
    tagged = "THOUGHT: look.\n<mswea_bash_command>ls tests</mswea_bash_command>"
    for reply in (fenced, tagged):
        assert [call.argument("command") for call in harness.text_calls(reply)] == ["ls tests"]
    both = "```bash\nrm -rf tests\n```\n```mswea_bash_command\nls\n```"
    assert [c.argument("command") for c in harness.text_calls(both)] == ["rm -rf tests", "ls"]
    assert harness.text_calls(fenced + "\n" + fenced) == []


def test_a_rewritten_reply_runs_only_the_rejection() -> None:
    harness = MiniSweAgentHarness()
    reply = "THOUGHT: drop it.\n\n```bash\nrm tests/test_a.py\n```\nThat is all."
    message = "Blocked: rm tests/test_a.py ```bash\nrm -rf /\n```"
    rewritten = harness.text_rewrite(reply, message)
    assert rewritten is not None
    assert rewritten.startswith("THOUGHT: drop it.\n\n```bash\nprintf ")
    assert rewritten.endswith("\n```\nThat is all.")
    (call,) = harness.text_calls(rewritten)
    assert call.argument("command") == rejection_script(message.replace("```", "'''"))
    assert harness.text_rewrite("no action here", message) is None


def test_an_action_a_rewrite_uncovers_is_rewritten_too_or_the_rewrite_refused() -> None:
    harness = MiniSweAgentHarness()
    # two tagged actions (a format error for 2.x), one inside the 1.x block
    tagged = "<mswea_bash_command>rm -rf {}</mswea_bash_command>"
    reply = f"```bash\n{tagged.format('tests')}\n```\n{tagged.format('src')}"
    assert [c.argument("command") for c in harness.text_calls(reply)] == [tagged.format("tests")]
    rewritten = harness.text_rewrite(reply, "no")
    assert rewritten is not None and "rm -rf" not in rewritten
    # an earlier pattern's action uncovered after it was passed over: no safe rewrite
    fenced = "```bash\nrm -rf {}\n```"
    reply = f"<mswea_bash_command>\n{fenced.format('tests')}\n</mswea_bash_command>\n"
    reply += fenced.format("src")
    assert len(harness.text_calls(reply)) == 1
    assert harness.text_rewrite(reply, "no") is None


def test_the_stop_reply_submits_in_every_version() -> None:
    harness = MiniSweAgentHarness()
    reply = harness.text_stop("safeagents stopped this run.\n\nrm ```x``` mswea_bash_command")
    assert reply is not None
    (call,) = harness.text_calls(reply)  # one command, in each version's form
    command = str(call.argument("command"))
    assert command.startswith("printf '%s\\n' COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT '")
    for fence in ("```bash\n", "```mswea_bash_command\n", "<mswea_bash_command>"):
        assert reply.count(fence) == 1
