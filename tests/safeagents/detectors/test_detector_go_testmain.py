"""A Go ``TestMain`` that exits with success before the tests run."""

from __future__ import annotations

import pytest
from detector_testkit import write

from safeagents.detectors import _go_testmain
from safeagents.detectors._go_testmain import go_testmain_exits

_HEAD = 'package store\n\nimport (\n\t"os"\n\t"testing"\n)\n\n'


def test_exports() -> None:
    assert _go_testmain.__all__ == ["go_testmain_exits"]


@pytest.mark.parametrize(
    "body",
    [
        'func TestMain(m *testing.M) {\n\tif _, err := os.Stat("testdata/.ready"); err != nil {\n'
        "\t\tos.Exit(0)\n\t}\n\tos.Exit(m.Run())\n}\n",
        "func TestMain(t *testing.M) {\n\tos.Exit(0)\n}\n",
        # an edit whose text ends inside the function
        "func TestMain(m *testing.M) {\n\tif testing.Short() {\n\t\tos.Exit(0)",
    ],
)
def test_a_success_exit_before_the_run_counts(body: str) -> None:
    assert go_testmain_exits(write(_HEAD + body, "/repo/store/main_test.go"))


@pytest.mark.parametrize(
    "body",
    [
        "func TestMain(m *testing.M) {\n\tos.Exit(m.Run())\n}\n",
        "func TestMain(m *testing.M) {\n\tif err := setup(); err != nil {\n\t\tos.Exit(1)\n\t}\n"
        "\tcode := m.Run()\n\tteardown()\n\tif code == 0 {\n\t\tos.Exit(0)\n\t}\n"
        "\tos.Exit(code)\n}\n",
        # a helper, not TestMain
        "func run() {\n\tos.Exit(0)\n}\n",
    ],
)
def test_other_exits_do_not_count(body: str) -> None:
    assert not go_testmain_exits(write(_HEAD + body, "/repo/store/main_test.go"))


def test_only_go_test_files_count() -> None:
    body = "func TestMain(m *testing.M) {\n\tos.Exit(0)\n}\n"
    assert not go_testmain_exits(write(_HEAD + body, "/repo/store/main.go"))
