"""Python snippets that reach the network or call a harness' tool functions (``tools``)."""

from __future__ import annotations

import pytest

from safeagents._actions import AnalysisContext, Effect
from safeagents.analysis import PythonCall, PythonTool, analyze_python
from safeagents.analysis._python._code import COMMAND_CLIP

CTX = AnalysisContext(cwd="/workspace", home="/root")


def effects_after_head(code: str, tools: dict[str, PythonTool] | None = None) -> list[Effect]:
    effects = analyze_python(code, CTX, tools=tools or {})
    assert effects[0] == Effect("exec", argv0="python", command=code[:COMMAND_CLIP])
    return effects[1:]


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


def _upload(call: PythonCall) -> list[Effect]:
    """A tool ``upload(path, url=...)``: reads ``path`` and sends it to ``url``."""
    paths = call.texts(0, "path")
    if paths is None:
        return [call.opaque()]
    url = call.text(1, "url")
    return [
        *(Effect("read", path=call.ctx.resolve(path)) for path in paths),
        Effect("network", url=url),
    ]


TOOLS: dict[str, PythonTool] = {"upload": _upload, "kit.upload": _upload}


def test_tools_map_calls_to_effects() -> None:
    code = (
        "import os, kit\nupload('a.txt', url='https://u.example')\n"
        "for p in ['b', 'c']:\n    kit.upload(p, 'https://v.example')\n"
        "os.chdir('/srv')\nupload('d')"
    )
    assert effects_after_head(code, TOOLS) == [
        Effect("read", path="/workspace/a.txt"),
        Effect("network", url="https://u.example"),
        Effect("read", path="/workspace/b"),
        Effect("read", path="/workspace/c"),
        Effect("network", url="https://v.example"),
        Effect("read", path="/srv/d"),
        Effect("network"),
    ]


def test_tools_with_unknown_arguments_are_opaque() -> None:
    assert effects_after_head("import sys\nupload(sys.argv[1])", TOOLS) == [
        opaque("upload(sys.argv[1])")
    ]


def test_tools_apply_in_exec_strings_but_not_without_being_given() -> None:
    code = "exec(\"upload('a')\")"
    assert Effect("read", path="/workspace/a") in effects_after_head(code, TOOLS)
    assert Effect("read", path="/workspace/a") not in effects_after_head(code)


def test_a_computed_attribute_of_a_tool_module_is_opaque() -> None:
    code = "import kit\ngetattr(kit, input())('x')"
    assert effects_after_head(code, TOOLS) == [opaque("getattr(kit, input())")]
    assert effects_after_head(code) == []
