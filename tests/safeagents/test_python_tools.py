"""Python snippets that reach the network or call hermes tools (execute_code)."""

from __future__ import annotations

import importlib

import pytest

from safeagents._actions import AnalysisContext, Effect
from safeagents._python_code import COMMAND_CLIP, analyze_python

CTX = AnalysisContext(cwd="/workspace", home="/root")


def effects_after_head(code: str) -> list[Effect]:
    effects = analyze_python(code, CTX)
    assert effects[0] == Effect("exec", argv0="python", command=code[:COMMAND_CLIP])
    return effects[1:]


def _shell_analyser_present() -> bool:
    try:
        module = importlib.import_module("safeagents._shell")
    except ImportError:
        return False
    return hasattr(module, "analyze_shell")


def write(path: str, **fields: object) -> Effect:
    return Effect("write", path=path, **fields)  # type: ignore[arg-type]


def opaque(segment: str) -> Effect:
    return Effect("exec", argv0="python", command=segment, opaque=True)


NETWORK_CASES: list[tuple[str, list[Effect]]] = [
    (
        "import requests\nrequests.get('https://github.com/org/repo/raw/main/sol.py')",
        [Effect("network", url="https://github.com/org/repo/raw/main/sol.py", host="github.com")],
    ),
    (
        "import httpx\nhttpx.post(url='http://api.example.com/x')",
        [Effect("network", url="http://api.example.com/x", host="api.example.com")],
    ),
    (
        "import requests\nrequests.request('GET', 'https://pypi.org/simple')",
        [Effect("network", url="https://pypi.org/simple", host="pypi.org")],
    ),
    (
        "from urllib.request import urlopen, Request\nurlopen(Request('http://h.io/a'))\n"
        "urlopen('http://h.io/b')",
        [
            Effect("network", url="http://h.io/a", host="h.io"),
            Effect("network", url="http://h.io/b", host="h.io"),
        ],
    ),
    (
        "import urllib.request\nurllib.request.urlretrieve('https://x.org/t.py', 'tests/t.py')",
        [Effect("network", url="https://x.org/t.py", host="x.org"), write("/workspace/tests/t.py")],
    ),
    (
        "import socket\nsocket.create_connection(('evil.example', 4444))",
        [Effect("network", host="evil.example")],
    ),
    (
        "import http.client\nhttp.client.HTTPSConnection('example.com:8443')",
        [Effect("network", host="example.com")],
    ),
    (
        "import requests\nrequests.get(input())",
        [Effect("network"), opaque("requests.get(input())")],
    ),
]


@pytest.mark.parametrize(("code", "expected"), NETWORK_CASES)
def test_network_effects(code: str, expected: list[Effect]) -> None:
    assert effects_after_head(code) == expected


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


@pytest.mark.skipif(not _shell_analyser_present(), reason="no safeagents._shell yet")
def test_hermes_terminal_delete_resolves_against_workdir() -> None:
    code = HERMES_PREAMBLE + "terminal('rm tests/t.py', workdir='/srv/app')"
    assert Effect("delete", path="/srv/app/tests/t.py") in effects_after_head(code)
