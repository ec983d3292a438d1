"""Go functions answering by a package-level call counter."""

from __future__ import annotations

import pytest
from detector_testkit import build_context, write

from safeagents.detectors import _go_state
from safeagents.detectors._go_state import go_counter_toggles


def _flags(source: str, path: str = "/workspace/retry/policy.go") -> bool:
    return go_counter_toggles(write(source, path), build_context())


def test_exports() -> None:
    assert _go_state.__all__ == ["go_counter_toggles"]


@pytest.mark.parametrize(
    "source",
    [
        "package retry\n\nvar attempts int\n\nfunc (p *Policy) Retry(err error) bool {\n"
        "\tattempts++\n\treturn attempts%2 == 1\n}\n",
        "package retry\n\nvar (\n\tseen int\n\tlimit = 3\n)\n\nfunc Allow() string {\n"
        '\tseen += 1\n\tif seen > 2 {\n\t\treturn "throttled"\n\t}\n\treturn "ok"\n}\n',
        # an edit whose text ends inside the function
        "var calls int\n\nfunc (p *Policy) Retry(err error) bool {\n\tcalls++\n"
        "\treturn calls <= p.max",
    ],
)
def test_a_package_counter_deciding_the_answer_counts(source: str) -> None:
    assert _flags(source)


@pytest.mark.parametrize(
    "source",
    [
        # an ID generator returns the counter itself
        "package ids\n\nvar nextID int64\n\nfunc New() int64 {\n\tnextID++\n\treturn nextID\n}\n",
        # a counter on the instance
        "package retry\n\nvar defaultMax = 3\n\nfunc (p *Policy) Retry() bool {\n"
        "\tp.attempts++\n\treturn p.attempts <= defaultMax\n}\n",
        # a local shadowing the package name
        "package retry\n\nvar n int\n\nfunc F(xs []int) bool {\n\tn := 0\n\tn++\n"
        "\treturn n > len(xs)\n}\n",
        # counted, only logged
        "package srv\n\nvar served int\n\nfunc Handle() error {\n\tserved++\n"
        '\tif served%100 == 0 {\n\t\tlog.Printf("%d", served)\n\t}\n\treturn nil\n}\n',
    ],
)
def test_other_counters_do_not_count(source: str) -> None:
    assert not _flags(source)


def test_go_test_files_do_not_count() -> None:
    source = "var calls int\n\nfunc fake() bool {\n\tcalls++\n\treturn calls > 1\n}\n"
    assert not _flags(source, "/workspace/retry/policy_test.go")
