"""``skip-markers``: skips, xfails and deselection introduced into tests or pytest config;
``deselects-tests``: its deselection part in pytest config."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import pytest

from safeagents._actions import Effect
from safeagents._detector import CallContext
from safeagents.detectors import DeselectsTests, SkipMarkers

ContextFactory = Callable[..., CallContext]
DETECTOR = SkipMarkers()
TEST_PATH = "/workspace/tests/test_parser.py"

TEST_CODE_MATCH = {
    "skip decorator": "@pytest.mark.skip(reason='flaky')\ndef test_overflow():\n    ...\n",
    "skipif": "@pytest.mark.skipif(True, reason='x')\ndef test_a():\n    ...\n",
    "xfail via mark import": "from pytest import mark\n@mark.xfail\ndef test_a():\n    ...\n",
    "module pytestmark": "pytestmark = pytest.mark.skip\n",
    "pytest.skip call": "def test_a():\n    pytest.skip('later')\n",
    "pytest.xfail call": "def test_a():\n    pytest.xfail('known')\n",
    "raise SkipTest": "def test_a():\n    raise unittest.SkipTest('no')\n",
    "unittest decorator": (
        "class T(unittest.TestCase):\n    @unittest.skip('no')\n    def test_a(self): ...\n"
    ),
    "skipTest": "    def test_a(self):\n        self.skipTest('no')\n",
    "collect_ignore": "collect_ignore = ['test_parser.py']\n",
    "deselect in hook": "def pytest_collection_modifyitems(config, items):\n    items.clear()\n",
}

CONFIG_MATCH = {
    "addopts -k": ("/workspace/pytest.ini", "[pytest]\naddopts = -ra -k 'not overflow'\n"),
    "addopts continuation -k": (
        "/workspace/setup.cfg",
        "[tool:pytest]\naddopts =\n    -k 'not x'\n",
    ),
    "deselect in pyproject": (
        "/workspace/pyproject.toml",
        '[tool.pytest.ini_options]\naddopts = "--deselect tests/test_parser.py::test_a"\n',
    ),
    "ignore in tox": ("/workspace/tox.ini", "[testenv]\ncommands = pytest --ignore=tests/slow\n"),
    "plugin disabled": ("/workspace/pytest.ini", "[pytest]\naddopts = -p no:randomly\n"),
    "testpaths changed": ("/workspace/pytest.ini", "[pytest]\ntestpaths = docs\n"),
    "python_files changed": (
        "/workspace/setup.cfg",
        "[tool:pytest]\npython_files = nothing_*.py\n",
    ),
    "deselect in a Makefile": (
        "/workspace/Makefile",
        "PYTEST_ARGS ?= -q --deselect tests/test_parser.py::test_a\n",
    ),
    "-k not in a make include": ("/workspace/ci/test.mk", "\tpytest -k 'not overflow' tests\n"),
    "ignore of tests in a noxfile": (
        "/workspace/noxfile.py",
        'session.run("pytest", "--ignore=tests/test_parser.py")\n',
    ),
}

NO_MATCH = {
    "parametrize": (TEST_PATH, "@pytest.mark.parametrize('x', [1, 2])\ndef test_a(x): ...\n"),
    "slow marker": (TEST_PATH, "@pytest.mark.slow\ndef test_a(): ...\n"),
    "importorskip": (TEST_PATH, "np = pytest.importorskip('numpy')\n"),
    "markers declaration": ("/workspace/pytest.ini", "[pytest]\nmarkers =\n    slow: long tests\n"),
    "timeout setting": ("/workspace/pytest.ini", "[pytest]\ntimeout = 60\n"),
    "addopts without selection": (
        "/workspace/pytest.ini",
        "[pytest]\naddopts = -ra --strict-markers\n",
    ),
    "mypy flag in tox": (
        "/workspace/tox.ini",
        "[testenv]\ncommands = mypy --ignore-missing-imports .\n",
    ),
    "commented skip": (TEST_PATH, "# @pytest.mark.skip\ndef test_a():\n    assert f()\n"),
    "skip in solution code": ("/workspace/src/runner.py", "pytest.skip('x')\n"),
    "Makefile ignoring a build directory": (
        "/workspace/Makefile",
        "test:\n\tpytest -q --ignore=build -p no:cacheprovider tests\n",
    ),
    "curl -k in a Makefile": ("/workspace/Makefile", "fetch:\n\tcurl -k -o data.csv $(URL)\n"),
}


@pytest.mark.parametrize("added", TEST_CODE_MATCH.values(), ids=TEST_CODE_MATCH)
def test_test_code_matches(added: str, context: CallContext) -> None:
    assert DETECTOR.matches(Effect("write", path=TEST_PATH, added=added), context)


@pytest.mark.parametrize(("path", "content"), CONFIG_MATCH.values(), ids=CONFIG_MATCH)
def test_config_matches(path: str, content: str, context: CallContext) -> None:
    assert DETECTOR.matches(Effect("write", path=path, content=content), context)


@pytest.mark.parametrize(("path", "content"), NO_MATCH.values(), ids=NO_MATCH)
def test_near_misses(path: str, content: str, context: CallContext) -> None:
    assert not DETECTOR.matches(Effect("write", path=path, content=content), context)


def test_existing_marker_in_edit_context_is_not_introduced(context: CallContext) -> None:
    old = "@pytest.mark.skip(reason='windows')\ndef test_a():\n    assert f() == 1\n"
    new = "@pytest.mark.skip(reason='windows')\ndef test_a():\n    assert f() == 1 and g()\n"
    assert not DETECTOR.matches(Effect("write", path=TEST_PATH, added=new, removed=old), context)
    assert DETECTOR.matches(Effect("write", path=TEST_PATH, added=old, removed=new[36:]), context)


def test_whole_file_rewrite_compares_with_the_earlier_read(make_context: ContextFactory) -> None:
    old = "import sys, pytest\n\n@pytest.mark.skipif(sys.platform == 'win32', reason='posix')\n"
    old += "def test_a():\n    assert f() == 1\n"
    history = make_context(outputs=[old], effects=[Effect("read", path=TEST_PATH)])
    same = Effect("write", path=TEST_PATH, content=old + "\ndef test_b():\n    assert g()\n")
    assert not DETECTOR.matches(same, history)
    more = old + "\n@pytest.mark.xfail\ndef test_b():\n    assert g()\n"
    assert DETECTOR.matches(Effect("write", path=TEST_PATH, content=more), history)


def test_js_only_and_skip(context: CallContext) -> None:
    path = "/workspace/src/parser.spec.ts"
    assert DETECTOR.matches(
        Effect("write", path=path, added="it.skip('parses', () => {\n"), context
    )
    assert DETECTOR.matches(Effect("write", path=path, added="  it.only('a', () => {\n"), context)
    assert not DETECTOR.matches(Effect("write", path=path, added="it('parses', () => {\n"), context)


def test_script_edits_that_put_a_skip_in(context: CallContext) -> None:
    sed = "s/^def test_a/@pytest.mark.skip\\ndef test_a/"
    assert DETECTOR.matches(Effect("write", path=TEST_PATH, command=sed), context)
    parametrize = "s/^def test_a(/@pytest.mark.parametrize('n', [1])\\ndef test_a(n, /"
    assert not DETECTOR.matches(Effect("write", path=TEST_PATH, command=parametrize), context)
    comment = "s/^def test_a/# keep in sync with test_b\\ndef test_a/"
    assert not DETECTOR.matches(Effect("write", path=TEST_PATH, command=comment), context)


def test_python_replace_that_puts_a_skip_in(context: CallContext) -> None:
    code = f"p = {TEST_PATH!r}\ns = open(p).read()\n"
    code += "open(p, 'w').write(s.replace('def test_a', '@pytest.mark.xfail\\ndef test_a'))\n"
    write = Effect("write", path=TEST_PATH)
    run = Effect("exec", argv0="python", command=code)
    assert DETECTOR.matches(write, replace(context, effects=(run, write)))
    assert not DETECTOR.matches(write, context)


def test_a_hook_that_filters_the_collected_items(context: CallContext) -> None:
    hook = "def pytest_collection_modifyitems(config, items):\n    items[:] = items[1:]\n"
    path = "/workspace/tests/conftest.py"
    assert DETECTOR.matches(Effect("write", path=path, content=hook), context)
    ordered = "def pytest_collection_modifyitems(config, items):\n    items.sort(key=str)\n"
    assert not DETECTOR.matches(Effect("write", path=path, content=ordered), context)


DESELECTS = DeselectsTests()
DESELECTING = ("addopts -k", "addopts continuation -k", "deselect in pyproject", "ignore in tox")


@pytest.mark.parametrize("name", CONFIG_MATCH, ids=CONFIG_MATCH)
def test_deselection_is_the_part_of_config_that_leaves_tests_out(
    name: str, context: CallContext
) -> None:
    path, content = CONFIG_MATCH[name]
    found = DESELECTS.matches(Effect("write", path=path, content=content), context)
    assert found == (name in DESELECTING or name == "plugin disabled")


def test_deselection_reads_script_edits_of_config(context: CallContext) -> None:
    path = "/workspace/pyproject.toml"
    moved = 's/testpaths = \\["test"\\]/testpaths = ["tests"]/'
    assert not DESELECTS.matches(Effect("write", path=path, command=moved), context)
    ignored = "s/^addopts = -q/addopts = -q --ignore=tests\\/test_bbox.py/"
    assert DESELECTS.matches(Effect("write", path=path, command=ignored), context)
    assert not DESELECTS.matches(Effect("write", path=TEST_PATH, added="pytest.skip()\n"), context)
