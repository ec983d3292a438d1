"""The demo's built-in agent loop: pi's tools, run inside the workspace only."""

from __future__ import annotations

import json
from pathlib import Path

from safeagents.demo import PI_TOOLS, run_builtin_agent
from safeagents.demo._agent import agent_env, execute
from safeagents.scripted import Script, ScriptedServer


def _run(workspace: Path, name: str, arguments: object) -> str:
    return execute(workspace.resolve(), name, json.dumps(arguments), agent_env())


def test_the_tools_are_pis() -> None:
    names = [tool["function"]["name"] for tool in PI_TOOLS]
    assert names == ["read", "bash", "edit", "write"]
    edit = PI_TOOLS[2]["function"]["parameters"]["properties"]["edits"]
    assert edit["items"]["required"] == ["oldText", "newText"]


def test_write_read_and_edit_work_inside_the_workspace(tmp_path: Path) -> None:
    assert "wrote 6 bytes" in _run(tmp_path, "write", {"path": "pkg/a.py", "content": "x = 1\n"})
    assert _run(tmp_path, "read", {"path": "pkg/a.py"}) == "x = 1\n"
    edits = [{"oldText": "x = 1", "newText": "x = 2"}]
    assert "replaced" in _run(tmp_path, "edit", {"path": "pkg/a.py", "edits": edits})
    assert (tmp_path / "pkg" / "a.py").read_text() == "x = 2\n"
    missing = [{"oldText": "nope", "newText": "x"}]
    assert _run(tmp_path, "edit", {"path": "pkg/a.py", "edits": missing}).startswith("Error:")


def test_paths_outside_the_workspace_are_refused(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    outside = tmp_path / "outside.txt"
    result = _run(workspace, "write", {"path": "../outside.txt", "content": "no"})
    assert result.startswith("Error:") and "outside the workspace" in result
    assert not outside.exists()
    assert _run(workspace, "read", {"path": str(outside)}).startswith("Error:")


def test_bash_runs_in_the_workspace_and_reports_failures(tmp_path: Path) -> None:
    (tmp_path / "marker.txt").write_text("here")
    assert _run(tmp_path, "bash", {"command": "cat marker.txt"}) == "here"
    failed = _run(tmp_path, "bash", {"command": "echo oops; exit 3"})
    assert failed.startswith("oops") and failed.endswith("Command exited with code 3")
    assert _run(tmp_path, "bash", {"command": "true"}) == "(no output)"


def test_bad_calls_become_error_results(tmp_path: Path) -> None:
    assert execute(tmp_path, "bash", "{not json", agent_env()).startswith("Error:")
    assert execute(tmp_path, "bash", "[1]", agent_env()).startswith("Error:")
    assert "unknown tool" in _run(tmp_path, "browse", {})
    assert "'command'" in _run(tmp_path, "bash", {"command": "  "})


def test_the_loop_runs_calls_until_a_final_answer(tmp_path: Path) -> None:
    script = Script.from_data(
        [
            {"write": {"path": "notes.txt", "content": "hello\n"}},
            {"shell": "cat notes.txt"},
            {"say": "all done"},
        ]
    )
    with ScriptedServer(script) as server:
        run = run_builtin_agent(server.base_url, "m", tmp_path, "go")
        requests = server.model.model_requests()
    assert (run.returncode, run.turns, run.final_text) == (0, 3, "all done")
    assert (tmp_path / "notes.txt").read_text() == "hello\n"
    assert requests[-1].tool_outputs()[-1] == "hello\n"
    assert requests[0].tool_names == ("read", "bash", "edit", "write")


def test_the_loop_stops_on_an_http_error_or_the_turn_limit(tmp_path: Path) -> None:
    with ScriptedServer(Script.from_data([{"shell": "true"}] * 5)) as server:
        limited = run_builtin_agent(server.base_url, "m", tmp_path, "go", max_turns=2)
        broken = run_builtin_agent(server.url + "/api", "m", tmp_path, "go")
    assert (limited.returncode, limited.turns) == (1, 2)
    assert limited.error is not None and "2 turns" in limited.error
    assert broken.returncode == 1 and broken.error is not None and "HTTP 404" in broken.error
