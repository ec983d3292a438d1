"""Effects of Python snippets (python -c, heredocs, a harness' code tool)."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from safeagents._actions import AnalysisContext, Effect
from safeagents.analysis import _embedded
from safeagents.analysis._python._code import (
    COMMAND_CLIP,
    MAX_CODE_CHARS,
    MAX_NODES,
    analyze_python,
)

CTX = AnalysisContext(cwd="/workspace", home="/root")


def effects_after_head(code: str, ctx: AnalysisContext = CTX) -> list[Effect]:
    effects = analyze_python(code, ctx)
    assert effects[0] == Effect("exec", argv0="python", command=code[:COMMAND_CLIP])
    return effects[1:]


def delete(path: str) -> Effect:
    return Effect("delete", path=path)


def read(path: str) -> Effect:
    return Effect("read", path=path)


def write(path: str, **fields: object) -> Effect:
    return Effect("write", path=path, **fields)  # type: ignore[arg-type]


def opaque(segment: str) -> Effect:
    return Effect("exec", argv0="python", command=segment, opaque=True)


FILE_CASES: list[tuple[str, str, list[Effect]]] = [
    (
        "with open w and a literal write",
        "with open('tests/test_a.py', 'w') as f:\n    f.write('def test_a():\\n')\n"
        "    f.write('    assert True\\n')\n",
        [
            write(
                "/workspace/tests/test_a.py",
                content="def test_a():\n    assert True\n",
                added="def test_a():\n    assert True\n",
            )
        ],
    ),
    (
        "chained open().write()",
        "open('conftest.py', 'w').write('import pytest')",
        [write("/workspace/conftest.py", content="import pytest", added="import pytest")],
    ),
    (
        "append keeps the old content unknown",
        "with open('log.txt', mode='a') as f:\n    f.writelines(['x', 'y'])",
        [write("/workspace/log.txt", content=None, added="xy")],
    ),
    (
        "exclusive create is a new file",
        "open('tests/new.py', 'x')",
        [write("/workspace/tests/new.py", new_file=True)],
    ),
    (
        "a non-literal write leaves content unknown",
        "import sys\nwith open('a.py', 'w') as f:\n    f.write(sys.stdin.read())",
        [write("/workspace/a.py")],
    ),
    ("plain open reads", "print(open('tests/t.py').read())", [read("/workspace/tests/t.py")]),
    ("binary read", "open('/etc/passwd', 'rb')", [read("/etc/passwd")]),
    ("io.open write", "import io\nio.open('a', 'wb')", [write("/workspace/a")]),
    (
        "os.open with write flags",
        "import os\nos.open('tests/t.py', os.O_WRONLY | os.O_TRUNC)\nos.open('r.txt', os.O_RDONLY)",
        [write("/workspace/tests/t.py"), read("/workspace/r.txt")],
    ),
    (
        "pathlib write_text / write_bytes / read_text",
        "from pathlib import Path\nPath('tests/t.py').write_text('x = 1')\n"
        "Path('b.bin').write_bytes(b'\\x00')\nPath('c.txt').read_text()",
        [
            write("/workspace/tests/t.py", content="x = 1", added="x = 1"),
            write("/workspace/b.bin", content="\x00", added="\x00"),
            read("/workspace/c.txt"),
        ],
    ),
    (
        "a file rewritten with str.replace adds the new text",
        "from pathlib import Path\np = Path('s.py')\ns = p.read_text()\n"
        "s = s.replace('def f(n):\\n', 'def f(n):\\n    if n == 7:\\n        return 1\\n')\n"
        "p.write_text(s)",
        [
            read("/workspace/s.py"),
            write("/workspace/s.py", added="def f(n):\n    if n == 7:\n        return 1\n"),
        ],
    ),
    (
        "a file rewritten with re.sub through open",
        "import re\ns = open('t.py').read()\ns = re.sub(r'== 4', '== 5', s)\n"
        "open('t.py', 'w').write(s)",
        [read("/workspace/t.py"), write("/workspace/t.py", added="== 5")],
    ),
    (
        "pathlib open for writing",
        "import pathlib\nwith pathlib.Path('a.txt').open('w') as handle:\n    handle.write('hi')",
        [write("/workspace/a.txt", content="hi", added="hi")],
    ),
    (
        "deletes",
        "import os, shutil\nos.remove('a')\nos.unlink('b')\nos.rmdir('c')\nshutil.rmtree('tests')",
        [
            delete("/workspace/a"),
            delete("/workspace/b"),
            delete("/workspace/c"),
            delete("/workspace/tests"),
        ],
    ),
    (
        "pathlib deletes",
        "from pathlib import Path\nPath('tests/t.py').unlink()\nPath('tests').rmdir()",
        [delete("/workspace/tests/t.py"), delete("/workspace/tests")],
    ),
    (
        "__import__ evasion",
        "__import__('os').remove('tests/t.py')",
        [delete("/workspace/tests/t.py")],
    ),
    (
        "importlib, getattr and posix aliases",
        "import importlib, posix\nimportlib.import_module('os').unlink('a')\n"
        "getattr(__import__('shutil'), 'rmtree')('tests')\nposix.remove('b')",
        [delete("/workspace/a"), delete("/workspace/tests"), delete("/workspace/b")],
    ),
    (
        "aliased imports",
        "from os import remove as rm\nimport shutil as sh\nrm('x')\nsh.rmtree('y')",
        [delete("/workspace/x"), delete("/workspace/y")],
    ),
    (
        "copy reads the source and writes the destination",
        "import shutil\nshutil.copy('/oracle/solution.py', 'src/')\n"
        "shutil.copyfile(src='a.py', dst='b.py')",
        [
            read("/oracle/solution.py"),
            write("/workspace/src/solution.py"),
            read("/workspace/a.py"),
            write("/workspace/b.py"),
        ],
    ),
    (
        "moves",
        "import os, shutil\nfrom pathlib import Path\nos.rename('tests/t.py', 't.bak')\n"
        "os.replace('a', 'b')\nshutil.move('tests', '/tmp/tests')\nPath('x').rename('y')",
        [
            Effect("move", path="/workspace/tests/t.py", dest="/workspace/t.bak"),
            Effect("move", path="/workspace/a", dest="/workspace/b"),
            Effect("move", path="/workspace/tests", dest="/tmp/tests"),
            Effect("move", path="/workspace/x", dest="/workspace/y"),
        ],
    ),
    (
        "os.chdir changes where later paths resolve",
        "import os\nos.chdir('tests')\nos.remove('t.py')",
        [delete("/workspace/tests/t.py")],
    ),
]

SPELLINGS_OF_TESTS_T_PY: dict[str, str] = {
    "os.path.join": "import os\nos.remove(os.path.join('tests', 't.py'))",
    "Path / operator": "from pathlib import Path\n(Path('tests') / 't.py').unlink()",
    "module constant": "import os\nTARGET = 'tests/t.py'\nos.remove(TARGET)",
    "f-string without placeholders": "import os\nos.remove(f'tests/t.py')",
    "f-string of a constant": "import os\nd = 'tests'\nos.remove(f'{d}/t.py')",
    "concatenation": "import os\nos.remove('tests' + '/' + 't.py')",
    "os.sep": "import os\nos.remove('tests' + os.sep + 't.py')",
    "str.join": "import os\nos.remove('/'.join(['tests', 't.py']))",
    "str.format": "import os\nos.remove('tests/{}'.format('t.py'))",
    "percent format": "import os\nos.remove('tests/%s' % 't.py')",
    "dotdot and home": "import os\nos.remove('~/../workspace/./tests/t.py')",
    "getcwd": "import os\nos.remove(os.path.join(os.getcwd(), 'tests', 't.py'))",
    "Path.cwd joinpath": "from pathlib import Path\nPath.cwd().joinpath('tests', 't.py').unlink()",
    "Path parent": "import pathlib\n(pathlib.Path('tests/x/y').parent.parent / 't.py').unlink()",
    "with_suffix": "from pathlib import Path\nPath('tests/t.txt').with_suffix('.py').unlink()",
    "str() of a Path": "import os\nfrom pathlib import Path\nos.remove(str(Path('tests', 't.py')))",
    "tuple unpacking": "import os\nd, f = 'tests', 't.py'\nos.remove(os.path.join(d, f))",
}

GLOB_LOOPS: list[tuple[str, str]] = [
    (
        "import glob, os\nfor f in glob.glob('tests/*.py'):\n    os.remove(f)",
        "/workspace/tests/*.py",
    ),
    (
        "from pathlib import Path\n[p.unlink() for p in Path('tests').glob('test_*.py')]",
        "/workspace/tests/test_*.py",
    ),
    (
        "from pathlib import Path\nfor p in Path('tests').rglob('*.py'):\n    p.unlink()",
        "/workspace/tests/**/*.py",
    ),
    (
        "import os\nfor n in os.listdir('tests'):\n    os.remove(os.path.join('tests', n))",
        "/workspace/tests/*",
    ),
]


@pytest.mark.parametrize(
    ("code", "expected"), [(c, e) for _, c, e in FILE_CASES], ids=[n for n, _, _ in FILE_CASES]
)
def test_file_effects(code: str, expected: list[Effect]) -> None:
    assert effects_after_head(code) == expected


@pytest.mark.parametrize(
    "code", SPELLINGS_OF_TESTS_T_PY.values(), ids=SPELLINGS_OF_TESTS_T_PY.keys()
)
def test_path_spellings_resolve(code: str) -> None:
    assert effects_after_head(code) == [delete("/workspace/tests/t.py")]


@pytest.mark.parametrize(("code", "pattern"), GLOB_LOOPS)
def test_loops_over_globs_keep_the_pattern(code: str, pattern: str) -> None:
    assert effects_after_head(code) == [delete(pattern)]


def test_loop_over_a_literal_list_gives_one_effect_each() -> None:
    code = "import os\nfor f in ['tests/a.py', 'tests/b.py']:\n    os.remove(f)"
    assert effects_after_head(code) == [
        delete("/workspace/tests/a.py"),
        delete("/workspace/tests/b.py"),
    ]


def test_paths_resolve_against_the_context() -> None:
    ctx = AnalysisContext(cwd="/srv/repo", home="/home/u")
    code = "import os\nos.remove('tests/t.py')\nos.remove('~/.bashrc')"
    assert effects_after_head(code, ctx) == [
        delete("/srv/repo/tests/t.py"),
        delete("/home/u/.bashrc"),
    ]


@pytest.mark.parametrize(
    ("code", "segment"),
    [
        ("import os, sys\nos.remove(sys.argv[1])", "os.remove(sys.argv[1])"),
        ("import os\np = 'a'\np = 'tests/t.py'\nos.remove(p)", "os.remove(p)"),
        ("def wipe(p):\n    import shutil\n    shutil.rmtree(p)", "shutil.rmtree(p)"),
        ("import os\nname = input()\ngetattr(os, name)('tests')", "getattr(os, name)"),
        ("m = input()\n__import__(m)", "__import__(m)"),
        ("mode = input()\nopen('tests/t.py', mode)", "open('tests/t.py', mode)"),
        ("exec(input())", "exec(input())"),
        ("import subprocess\nsubprocess.run(cmd)", "subprocess.run(cmd)"),
        ("paths = input().split()\npaths[0].unlink()", "paths[0].unlink()"),
        ("import shutil\nshutil.move('a', input())", "shutil.move('a', input())"),
        ("x = 1\nif x:\n    open(\n        x,\n        'w')", "open(\n        x,\n        'w')"),
        ("import os\nos.remove('é' + input())  # unicode columns", "os.remove('é' + input())"),
    ],
)
def test_unresolvable_operations_become_opaque_execs(code: str, segment: str) -> None:
    assert effects_after_head(code) == [opaque(segment)]


@pytest.mark.parametrize(
    "code",
    [
        "xs = [1, 2]\nxs.remove(1)",
        "s = 'abc'.replace('a', 'b')",
        "from pathlib import Path\nstr(Path('tests/a.py')).replace('a', 'b')",
        "def open(path, mode):\n    return None\nopen('tests/t.py', 'w')",
        "import os\nos.path.exists('tests/t.py')\nos.listdir('tests')",
        "import webbrowser\nwebbrowser.open('x')",
        "print('os.remove(\"tests/t.py\")')",
        "import json\njson.dumps({'a': 1})",
    ],
)
def test_look_alikes_have_no_effects(code: str) -> None:
    assert effects_after_head(code) == []


def test_parse_failure_is_one_opaque_exec() -> None:
    code = "def f(:\n    os.remove('tests/t.py')"
    assert analyze_python(code, CTX) == [opaque(code)]


@pytest.mark.parametrize(
    "code",
    [
        "x = " + "(" * 500 + ")" * 500,
        "x = " + "a+" * 100_000 + "a",
        "x = '\0'",
        "'" + "\\d" + "'",
    ],
)
def test_hostile_or_odd_input_does_not_raise(code: str) -> None:
    effects = analyze_python(code, CTX)
    assert effects[0].argv0 == "python"
    assert effects[0].command == code[:COMMAND_CLIP]


def test_oversized_code_is_not_analysed() -> None:
    code = "import os\nos.remove('tests/t.py')\n" + "#" * MAX_CODE_CHARS
    gave_up = replace(opaque(code[:COMMAND_CLIP]), unanalysable="budget")
    assert analyze_python(code, CTX) == [gave_up]


def test_node_budget_marks_the_rest_opaque() -> None:
    code = "x = 1\n" * (MAX_NODES // 3) + "import os\nos.remove('tests/t.py')\n"
    effects = analyze_python(code, CTX)
    assert effects[0].opaque is False
    assert effects[-1] == replace(opaque(code[:COMMAND_CLIP]), unanalysable="budget")
    assert delete("/workspace/tests/t.py") not in effects


def test_head_command_is_clipped_code() -> None:
    code = "x = 1  # " + "y" * 5000
    assert analyze_python(code, CTX) == [Effect("exec", argv0="python", command=code[:2000])]


def test_nested_exec_of_a_literal_is_analysed() -> None:
    code = "exec(compile(\"import os; os.unlink('tests/a.py')\", '<s>', 'exec'))"
    assert effects_after_head(code) == [
        Effect("exec", argv0="python", command="import os; os.unlink('tests/a.py')"),
        delete("/workspace/tests/a.py"),
    ]


@pytest.mark.parametrize(
    "code",
    [
        "import subprocess\nsubprocess.run(['rm', '-f', 'tests/t.py'])",
        "import subprocess\nsubprocess.run('rm -f tests/t.py', shell=True)",
        "import subprocess\nsubprocess.check_output(args=('/bin/rm', '-f', 'tests/t.py'))",
        "import os\nos.system('rm -f tests/t.py')",
        "import os\nos.execvp('rm', ['rm', '-f', 'tests/t.py'])",
        "import os\nos.execlp('rm', 'rm', '-f', 'tests/t.py')",
    ],
)
def test_process_calls_yield_an_exec_of_the_command(code: str) -> None:
    execs = [effect for effect in effects_after_head(code) if effect.kind == "exec"]
    assert [effect.argv0 for effect in execs] == ["rm"]
    assert "tests/t.py" in execs[0].argv


@pytest.mark.parametrize(
    "code",
    [
        "import subprocess\nsubprocess.run(['rm', '-f', 'tests/t.py'])",
        "import subprocess\nsubprocess.call('rm -f tests/t.py', shell=True)",
        "import subprocess\nsubprocess.run(['bash', '-c', 'rm tests/t.py'])",
        "import os\nos.popen('rm tests/t.py')",
    ],
)
def test_process_calls_reach_the_shell_analyser(code: str) -> None:
    assert delete("/workspace/tests/t.py") in effects_after_head(code)


def test_without_a_shell_analyser_commands_are_split_plainly(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delitem(_embedded._ANALYSERS, "shell")
    code = (
        "import subprocess\nsubprocess.run('rm -f \"tests/t.py\"', shell=True)\n"
        "import os\nos.system('echo \"')"
    )
    assert effects_after_head(code) == [
        Effect("exec", argv0="rm", argv=("rm", "-f", "tests/t.py"), command='rm -f "tests/t.py"'),
        Effect("exec", command='echo "', opaque=True),
    ]


def test_non_literal_argv_is_opaque() -> None:
    code = "import subprocess, sys\nsubprocess.run(['rm', sys.argv[1]])"
    assert effects_after_head(code) == [opaque("subprocess.run(['rm', sys.argv[1]])")]


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=400) | st.binary(max_size=400).map(lambda raw: raw.decode("latin-1")))
def test_random_text_never_raises(code: str) -> None:
    effects = analyze_python(code, CTX)
    assert effects[0].argv0 == "python"


PYTHONISH = st.lists(
    st.sampled_from(
        [
            "import os",
            "from pathlib import Path",
            "from hermes_tools import *",
            "p = 'tests'",
            "p = p + '/x'",
            "q = Path(p) / 'y'",
            "for f in [p, q]:",
            "    os.remove(f)",
            "    q.unlink()",
            "with open(p, 'w') as h:",
            "    h.write(p)",
            "exec('os.remove(p)')",
            "write_file(p, q)",
            "terminal(p)",
            "patch(mode='patch', patch=p)",
            "getattr(os, p)(q)",
            "x = f'{p}{q!r}'",
        ]
    ),
    max_size=15,
)


@settings(max_examples=200, deadline=None)
@given(PYTHONISH)
def test_python_shaped_noise_never_raises(lines: list[str]) -> None:
    effects = analyze_python("\n".join(lines), CTX)
    assert all(effect.path is None or effect.path.startswith("/") for effect in effects)
