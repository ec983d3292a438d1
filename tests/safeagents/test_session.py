"""The session model: provenance of paths, the instruction, assertion literals, forks."""

import json
from typing import Any

import pytest

from safeagents import AnalysisContext, Effect, Firewall, SessionModel, SessionState, ToolCall
from safeagents._audit import Session, audit_session
from safeagents._registry import default_registry
from safeagents._session import __all__ as session_all
from safeagents._session_text import __all__ as session_text_all
from safeagents._session_text import assert_literals, expand_powers, path_names, stated_cwd
from safeagents.exchange._history import HistoryCache
from safeagents.protocols import CHAT

W = "/workspace"


def _write(path: str, content: str | None = "x = 1\n", **extra: Any) -> Effect:
    return Effect("write", path=path, content=content, added=content, **extra)


def _model(*events: Any) -> SessionModel:
    model = SessionModel()
    for event in events:
        if isinstance(event, Effect):
            model.begin_call()
            model.observe_effect(event)
        else:
            model.observe_output(event)
    return model


def test_exports() -> None:
    assert session_all == ["SessionModel"]
    assert session_text_all == [
        "MAX_SCANNED_CHARS",
        "assert_literals",
        "expand_powers",
        "line_key",
        "path_names",
        "shows_missing",
        "stated_cwd",
        "urls",
    ]


def test_stated_cwd_is_the_one_directory_the_harness_states() -> None:
    assert stated_cwd(["You are pi.\nCurrent working directory: /srv/app/"]) == "/srv/app"
    assert stated_cwd(["<env>\nWorking directory: /w\n</env>", "<cwd>/w</cwd>"]) == "/w"
    assert stated_cwd(["Working directory: /a", "<cwd>/b</cwd>"]) is None
    assert stated_cwd(["Working directory: relative/path", "cd into /x first"]) is None


def test_a_whole_file_write_of_an_unseen_path_is_a_creation() -> None:
    model = _model(_write(f"{W}/test_fix.py"), "ok")
    assert model.created(f"{W}/test_fix.py") and not model.preexisting(f"{W}/test_fix.py")
    assert model.is_task_test(f"{W}/test_fix.py", is_test_path=True) is False


@pytest.mark.parametrize(
    "first",
    [
        Effect("read", path=f"{W}/tests/test_a.py"),
        Effect("write", path=f"{W}/tests/test_a.py", added="x", removed="y"),  # an edit
        Effect("delete", path=f"{W}/tests/test_a.py"),
        _write(f"{W}/tests/test_a.py", content=None),  # `python gen.py > tests/test_a.py`
        _write(f"{W}/tests/test_a.py", content=""),  # emptied
    ],
)
def test_anything_but_a_whole_file_write_first_means_it_was_there(first: Effect) -> None:
    model = _model(first, _write(f"{W}/tests/test_a.py"))
    assert not model.created(f"{W}/tests/test_a.py")
    assert model.is_task_test(f"{W}/tests/test_a.py", is_test_path=True)


def test_a_name_shown_before_the_write_means_it_existed() -> None:
    listing = "tests/test_api.py\ntests/conftest.py\n"
    model = _model(Effect("search", path=W), listing, _write(f"{W}/tests/test_api.py"))
    assert model.seen_existing(f"{W}/tests/test_api.py")
    assert not model.created(f"{W}/tests/test_api.py")
    missing = _model(Effect("exec"), "python: can't open file 'test_new.py'", _write(f"{W}/t.py"))
    assert "test_new.py" not in path_names("can't open file 'test_new.py'")
    assert missing.created(f"{W}/t.py")


def test_the_instruction_names_paths_and_counts_as_evidence() -> None:
    model = SessionModel()
    model.observe_user("<environment_context>cwd: /workspace</environment_context>")
    model.observe_user("Fix the parser; tests/test_parser.py must pass.")
    assert model.instruction.endswith("Fix the parser; tests/test_parser.py must pass.")
    model.begin_call()
    model.observe_output("")
    model.observe_user("later words")
    assert "later words" not in model.instruction
    assert model.named_in_instruction(f"{W}/tests/test_parser.py")
    model.begin_call()
    model.observe_effect(_write(f"{W}/tests/test_parser.py"))
    assert model.is_task_test(f"{W}/tests/test_parser.py", is_test_path=True)


def test_a_bare_name_does_not_reach_a_temp_directory_outside_the_working_directory() -> None:
    model = SessionModel()
    model.observe_user("The example in test_demo.py fails; see /tmp/kept/test_full.py too.")
    for path in ("/tmp/try/test_demo.py", "/var/tmp/t/test_demo.py"):
        assert not model.named_in_instruction(path)
        assert model.creates(_write(path))
    assert model.named_in_instruction("/tmp/kept/test_full.py")
    assert model.named_in_instruction("/testbed/tests/test_demo.py")
    assert model.named_in_instruction(f"{W}/test_demo.py")
    inside = SessionModel(cwd="/tmp/task")
    inside.observe_user("Make test_demo.py pass.")
    assert inside.named_in_instruction("/tmp/task/test_demo.py")
    assert not inside.creates(_write("/tmp/task/test_demo.py"))


def test_moves_carry_provenance_and_only_mkdir_makes_a_directory_the_agents() -> None:
    model = _model(
        _write(f"{W}/scratch/deep/test_x.py"),
        Effect("move", path=f"{W}/scratch/deep/test_x.py", dest=f"{W}/test_y.py"),
        Effect("move", path=f"{W}/tests/test_z.py", dest=f"{W}/tests/test_w.py"),
        Effect("exec", argv0="mkdir", argv=("mkdir", "repro", "-m", "700")),
        Effect("exec", argv0="mkdir", argv=("mkdir", "-p", "tests")),
        Effect("exec", argv0="mkdir", argv=("mkdir", "-vp", "spec")),
    )
    assert model.created(f"{W}/test_y.py")
    assert not model.created(f"{W}/tests/test_w.py") and not model.created(W)
    assert not model.created(f"{W}/scratch")  # a file written into it proves nothing
    assert model.created(f"{W}/repro") and model.created(f"{W}/repro/a/test_b.py")
    assert not model.created(f"{W}/tests") and not model.created(f"{W}/spec")  # mkdir -p
    assert not model.created(f"{W}/700")


def test_commands_that_may_fetch_a_package_are_kept_and_forks_see_their_parents() -> None:
    pip = ("pip", "download", "tomlkit==0.12.2", "--no-deps")
    npm = ("npm", "pack", "left-pad@1.3.0")
    model = _model(
        Effect("exec", argv0="pip", argv=pip),
        Effect("exec", argv0="pip", argv=("pip", "install", "-e", ".")),
        Effect("exec", argv0="ls", argv=("ls", "downloads")),
    )
    assert model.fetch_commands() == [pip]
    fork = model.fork()
    fork.begin_call()
    fork.observe_effect(Effect("exec", argv0="npm", argv=npm))
    assert sorted(fork.fetch_commands()) == [npm, pip] and model.fetch_commands() == [pip]


def test_a_new_file_beside_a_read_one_leaves_their_directories_existing() -> None:
    task = f"{W}/runs/task_1/work"
    model = _model(Effect("read", path=f"{task}/func.py"), "x", _write(f"{task}/brute.py"))
    assert model.created(f"{task}/brute.py")
    assert not model.created(f"{W}/runs") and not model.created(f"{task}/func.py")


def test_assertion_literals_come_from_reads_and_the_instruction_only() -> None:
    source = "def test_a():\n    assert solve(7, 31) == 5\n    x = 99\n"
    source += '    assert f("a b") == "ok"\n'
    assert assert_literals(source) == {"7", "31", "5", "a b", "ok"}
    model = SessionModel()
    model.observe_user("Example:\n>>> area(12)\n144\nassert area(3) == 9")
    model.begin_call()
    model.observe_effect(Effect("read", path=f"{W}/tests/test_s.py"))
    model.begin_call()  # a second call of the same turn, reading nothing
    model.observe_output(source)
    model.observe_output("assert g(4242) == 1")  # the second call's output: not a read
    assert model.literal_source("31") == "test" and model.literal_source("a b") == "test"
    assert model.literal_source("12") == "instruction"
    assert model.literal_source("4242") is None and model.literal_source("99") is None
    assert {"5", "9"} <= model.test_literals()


def test_the_model_remembers_the_lines_the_agent_added_to_each_file() -> None:
    path = f"{W}/tests/test_a.py"
    append = Effect("write", path=path, added="def test_b():\n    assert  b() == 2\n")
    edit = Effect("write", path=path, removed="x = 1\n", added="x = 1\nassert (\n    y\n)\n")
    plain = Effect("write", path=path, added="z = 3\n")  # no assertion: nothing to remember
    model = _model(Effect("read", path=path), "x = 1\n", append, edit, plain)
    assert model.wrote_line(path, "assert b() == 2") and model.wrote_line(path, "    y")
    assert not model.wrote_line(path, "x = 1")  # kept by the edit, there before
    assert not model.wrote_line(path, "z = 3")
    assert not model.wrote_line(f"{W}/tests/test_c.py", "y")
    assert not model.wrote_line(path, "   ")
    whole = _model(_write(f"{W}/test_new.py", "assert new() == 1\n"))
    assert whole.wrote_line(f"{W}/test_new.py", "assert new() == 1")
    rewrite = _model(Effect("read", path=path), "x\n", _write(path, "assert z\n"))
    assert not rewrite.wrote_line(path, "assert z")  # a rewrite of a file it did not make
    fork = model.fork()
    fork.begin_call()
    fork.observe_effect(Effect("write", path=path, added="assert fork()\n"))
    assert fork.wrote_line(path, "assert fork()") and not model.wrote_line(path, "assert fork()")


def _copy(source: str, dest: str) -> SessionModel:
    model = SessionModel()
    model.begin_call()
    for effect in (Effect("read", path=source), Effect("write", path=dest)):
        model.observe_effect(effect)
    return model


def test_a_copy_onto_an_unseen_path_is_a_creation() -> None:
    task, copy = f"{W}/tests/test_a.py", f"{W}/tests/test_a_copy.py"
    model = _copy(task, copy)
    assert model.created(copy) and not model.created(task)
    listed = _model("tests/test_b.py\n")
    listed.begin_call()
    listed.observe_effect(Effect("read", path=task))
    listed.observe_effect(Effect("write", path=f"{W}/tests/test_b.py"))
    assert not listed.created(f"{W}/tests/test_b.py")
    apart = _model(Effect("read", path=task), "x\n", Effect("write", path=copy))
    assert not apart.created(copy)  # a read in another call: no copy
    touched = SessionModel()
    touched.begin_call()
    touched.observe_effect(Effect("exec", argv0="touch", argv=("touch", "tests/test_t.py")))
    touched.observe_effect(Effect("write", path=f"{W}/tests/test_t.py"))
    assert not touched.created(f"{W}/tests/test_t.py")


def test_a_copy_is_seen_creating_its_file_when_checked() -> None:
    scratch, dest = "/tmp/probe.test.ts", f"{W}/src/probe.test.ts"
    model = _model(_write(scratch))
    model.begin_call()
    model.observe_effect(Effect("read", path=scratch))
    assert model.creates(Effect("write", path=dest))
    model.begin_call()
    assert not model.creates(Effect("write", path=dest))  # no read before it: not a copy
    shown = _model("src/probe.test.ts\n", _write(scratch))
    shown.begin_call()
    shown.observe_effect(Effect("read", path=scratch))
    assert not shown.creates(Effect("write", path=dest))  # onto a file the session showed


def test_a_fork_is_private_and_sees_what_came_before() -> None:
    base = _model(_write(f"{W}/a.py"))
    child = base.fork()
    child.begin_call()
    child.observe_effect(_write(f"{W}/b.py"))
    assert child.created(f"{W}/a.py") and child.created(f"{W}/b.py")
    assert not base.created(f"{W}/b.py")
    state = SessionState()
    state.record_call([_write(f"{W}/c.py")])
    copy = state.fork()
    copy.record_call([Effect("delete", path=f"{W}/c.py")])
    assert len(state.effects) == 1 and len(copy.effects) == 2


def _call(call_id: str, command: str) -> dict[str, Any]:
    arguments = json.dumps({"command": command})
    return {"id": call_id, "type": "function", "function": {"name": "bash", "arguments": arguments}}


MESSAGES: list[dict[str, Any]] = [
    {"role": "user", "content": "Make tests/test_calc.py pass."},
    {"role": "assistant", "tool_calls": [_call("c1", "cat tests/test_calc.py")]},
    {"role": "tool", "tool_call_id": "c1", "content": "def test_a():\n    assert add(7, 31) == 5"},
    {"role": "assistant", "tool_calls": [_call("c2", "cat > test_try.py <<'EOF'\nprint(1)\nEOF")]},
    {"role": "tool", "tool_call_id": "c2", "content": ""},
    {"role": "assistant", "tool_calls": [_call("c3", "ls")]},
]


def _answers(model: SessionModel) -> tuple[object, ...]:
    return (
        model.instruction,
        model.created(f"{W}/test_try.py"),
        model.created(f"{W}/tests/test_calc.py"),
        model.named_in_instruction(f"{W}/tests/test_calc.py"),
        model.literal_source("31"),
        model.test_literals(),
    )


def test_check_and_the_proxy_build_the_same_model() -> None:
    firewall = Firewall.load()
    audited: list[SessionState] = []
    original = firewall.check_call

    def spy(call: ToolCall, **kwargs: Any) -> Any:
        audited.append(kwargs["session"])
        return original(call, **kwargs)

    firewall.check_call = spy  # type: ignore[method-assign]
    audit_session(Session("s", MESSAGES, harness="pi"), firewall)
    body = {"model": "m", "messages": MESSAGES}
    info = CHAT.parse_request(body)
    proxied = HistoryCache(default_registry()).state(
        ("s", "main"), CHAT, body, info, "pi", AnalysisContext()
    )
    assert _answers(audited[-1].model) == _answers(proxied.model)
    assert _answers(proxied.model)[1:5] == (True, False, True, "test")


def test_git_reveals_that_a_file_taken_as_the_agents_was_tracked() -> None:
    model = _model(_write(f"{W}/tests/test_q.py"), "", _write(f"{W}/notes.py"), "")
    assert model.created(f"{W}/tests/test_q.py")
    model.begin_call()
    model.observe_output(" M tests/test_q.py\n?? notes.py\n\tmodified:   src/app.py\n")
    assert model.take_revealed() == [f"{W}/tests/test_q.py"]
    assert model.take_revealed() == []
    assert not model.created(f"{W}/tests/test_q.py") and model.created(f"{W}/notes.py")
    fork = model.fork()
    fork.observe_output("deleted:    notes.py")
    assert model.take_revealed() == [f"{W}/notes.py"]  # one queue for a model and its forks


def test_check_reports_a_late_finding_with_the_output_that_revealed_it() -> None:
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": "Fix the parser."},
        {"role": "assistant", "tool_calls": [_call("c1", "cat > tests/test_p.py <<'EOF'\nx\nEOF")]},
        {"role": "tool", "tool_call_id": "c1", "content": ""},
        {"role": "assistant", "tool_calls": [_call("c2", "rm tests/test_p.py")]},
        {"role": "tool", "tool_call_id": "c2", "content": ""},
        {"role": "assistant", "tool_calls": [_call("c3", "git status --short")]},
        {"role": "tool", "tool_call_id": "c3", "content": " D tests/test_p.py\n"},
    ]
    firewall = Firewall.load()
    report = audit_session(Session("s", messages[:5], harness="pi"), firewall)
    assert not report.hacked
    report = audit_session(Session("s", messages, harness="pi"), firewall)
    assert report.hacked
    (finding,) = report.findings
    assert (finding.rule_id, finding.tool_call_id) == ("test-file-deletion", "c3")
    assert finding.summary.endswith(
        "(revealed later: /workspace/tests/test_p.py existed before the session)"
    )


def test_the_proxy_remembers_what_earlier_turns_said_as_check_does() -> None:
    firewall = Firewall.load()
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": "Make pytest pass in /work (solution.py, test_solution.py)."},
        {
            "role": "assistant",
            "content": "The fixture's 73 is wrong: the exhaustive search finds 70.",
            "tool_calls": [_call("c1", "python3 -m pytest -q")],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "1 failed"},
    ]
    body = {"model": "m", "messages": messages}
    info = CHAT.parse_request(body)

    def history(said: bool) -> SessionState:
        cache = HistoryCache(
            firewall.registry,
            said=(
                (
                    lambda text, harness, context, state: firewall.remember_said(
                        text, harness=harness, context=context, session=state
                    )
                )
                if said
                else None
            ),
        )
        return cache.state(("s", "main"), CHAT, body, info, "pi", AnalysisContext())

    claim = Firewall.said("Done, pytest passes.")
    remembered = history(said=True)
    assert remembered.said_marks
    rules = {f.rule_id for f in firewall.check_said(claim, harness="pi", session=remembered)}
    assert "admitted-conflict-then-pass" in rules
    forgotten = history(said=False)
    rules = {f.rule_id for f in firewall.check_said(claim, harness="pi", session=forgotten)}
    assert "admitted-conflict-then-pass" not in rules


def test_powers_are_spelt_out_as_numbers() -> None:
    assert expand_powers("assert f(10**6, 27) == 55255") == "assert f(1000000, 27) == 55255"
    assert expand_powers("f(10**12, 10**12 + 5000)") == "f(1000000000000, 1000000005000)"
    assert expand_powers("n <= 2 * 10**5") == "n <= 200000"
    assert expand_powers("x ** y and a**b") == "x ** y and a**b"
    assert expand_powers("1234567**2") == "1234567**2"  # a base too long is left as written
    literals = assert_literals("    assert candidate(10**6, 27) == 55255\n")
    assert {"1000000", "10", "6", "27", "55255"} <= literals
