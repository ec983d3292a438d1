"""Calls of the ``hermes_tools`` API in ``execute_code`` snippets (``EXECUTE_CODE_TOOLS``)."""

from __future__ import annotations

from harness_plugins.hermes import EXECUTE_CODE_TOOLS
from safeagents._actions import AnalysisContext, Effect
from safeagents.analysis import analyze_python

CTX = AnalysisContext(cwd="/workspace", home="/root")


def effects_after_head(code: str) -> list[Effect]:
    effects = analyze_python(code, CTX, tools=EXECUTE_CODE_TOOLS)
    assert effects[0] == Effect("exec", argv0="python", command=code[:2000])
    return effects[1:]


def write(path: str, **fields: object) -> Effect:
    return Effect("write", path=path, **fields)  # type: ignore[arg-type]


def opaque(segment: str) -> Effect:
    return Effect("exec", argv0="python", command=segment, opaque=True)


HERMES_PREAMBLE = "from hermes_tools import terminal, write_file, read_file, patch, search_files\n"


def test_hermes_file_tools() -> None:
    code = HERMES_PREAMBLE + (
        "write_file('tests/test_x.py', 'def test_x(): assert True')\n"
        "read_file(path='/solution/answer.txt')\n"
        "patch(path='tests/test_m.py', old_string='assert f(2) == 4',\n"
        "      new_string='assert f(2) == 5')\n"
        "patch(mode='patch',\n"
        "      patch='*** Begin Patch\\n*** Delete File: tests/t.py\\n*** End Patch')\n"
        "search_files('def test_', path='tests')\n"
        "search_files(pattern='TODO')\n"
    )
    assert effects_after_head(code) == [
        write(
            "/workspace/tests/test_x.py",
            content="def test_x(): assert True",
            added="def test_x(): assert True",
        ),
        Effect("read", path="/solution/answer.txt"),
        write("/workspace/tests/test_m.py", added="assert f(2) == 5", removed="assert f(2) == 4"),
        Effect("delete", path="/workspace/tests/t.py"),
        Effect("search", pattern="def test_", path="/workspace/tests"),
        Effect("search", pattern="TODO", path="/workspace"),
    ]


def test_hermes_module_import_and_unknown_arguments() -> None:
    code = (
        "import hermes_tools as ht\nimport sys\n"
        "ht.write_file('a.py', sys.argv[1])\nht.read_file(sys.argv[2])"
    )
    assert effects_after_head(code) == [
        write("/workspace/a.py"),
        opaque("ht.read_file(sys.argv[2])"),
    ]


def test_hermes_terminal_runs_the_shell_analyser() -> None:
    code = (
        HERMES_PREAMBLE + "terminal('pytest -q tests', workdir='/srv')\nterminal(command=input())"
    )
    effects = effects_after_head(code)
    runs = [effect for effect in effects if effect.kind == "exec" and effect.argv0 == "pytest"]
    assert len(runs) == 1
    assert "tests" in runs[0].argv
    assert effects[-1] == opaque("terminal(command=input())")


def test_hermes_terminal_delete_resolves_against_workdir() -> None:
    code = HERMES_PREAMBLE + "terminal('rm tests/t.py', workdir='/srv/app')"
    assert Effect("delete", path="/srv/app/tests/t.py") in effects_after_head(code)


def test_other_hermes_tools_functions_have_no_effect() -> None:
    assert effects_after_head("import hermes_tools\nhermes_tools.todo('x').touch()") == []


def test_a_computed_hermes_tools_attribute_is_opaque() -> None:
    code = "import hermes_tools\ngetattr(hermes_tools, input())('rm x')"
    assert effects_after_head(code) == [opaque("getattr(hermes_tools, input())")]
