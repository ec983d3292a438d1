"""Python and patch text embedded in shell: these rows need the Python and patch analysers."""

from __future__ import annotations

import pytest
from shell_cases import CTX, Case, E, case, check

from safeagents.analysis._shell import analyze_shell

W = "/workspace"

PATCH = "*** Begin Patch\n*** Delete File: tests/t.py\n*** End Patch\n"
DIFF = "--- a/tests/t.py\n+++ b/tests/t.py\n@@ -1 +1 @@\n-assert f() == 2\n+assert True\n"

EMBEDDED = [
    case(
        "python -c \"import os; os.remove('tests/t.py')\"",
        E("exec", argv0="python"),
        E("delete", path=f"{W}/tests/t.py"),
    ),
    case(
        "python3.11 -uc 'import shutil; shutil.rmtree(\"tests\")'", E("delete", path=f"{W}/tests")
    ),
    case(
        "cd tests && python3 -c 'import os; os.remove(\"t.py\")'",
        E("delete", path=f"{W}/tests/t.py"),
    ),
    case(
        "python - <<'EOF'\nopen('tests/t.py', 'w').write('x')\nEOF",
        E("exec", argv0="python", opaque=False),
        E("write", path=f"{W}/tests/t.py"),
    ),
    case(
        "python3 <<EOF\nimport os\nos.remove('tests/t.py')\nEOF",
        E("delete", path=f"{W}/tests/t.py"),
    ),
    case("echo \"import os; os.remove('a.py')\" | python", E("delete", path=f"{W}/a.py")),
    case(
        f"apply_patch <<'EOF'\n{PATCH}EOF",
        E("exec", argv0="apply_patch"),
        E("delete", path=f"{W}/tests/t.py"),
    ),
    case(f'apply_patch "{PATCH}"', E("delete", path=f"{W}/tests/t.py")),
    case(f"cd tests/.. && apply_patch <<'EOF'\n{PATCH}EOF", E("delete", path=f"{W}/tests/t.py")),
    case(
        f"git apply <<'EOF'\n{DIFF}EOF",
        E("write", path=f"{W}/tests/t.py", added="assert True", removed="assert f() == 2"),
    ),
    case(f"patch -p1 <<'EOF'\n{DIFF}EOF", E("write", path=f"{W}/tests/t.py")),
    case('apply_patch "$PATCH"', E("exec", argv0="apply_patch", opaque=True)),
]


@pytest.mark.parametrize("item", EMBEDDED, ids=[item.id for item in EMBEDDED])
def test_embedded(item: Case) -> None:
    check(item)


def test_a_failing_python_analyser_makes_the_exec_opaque(monkeypatch: pytest.MonkeyPatch) -> None:
    from safeagents.analysis import _embedded

    def broken(code: str, ctx: object) -> list[object]:
        raise RuntimeError("boom")

    monkeypatch.setitem(_embedded._ANALYSERS, "python", broken)
    effects = analyze_shell("python -c 'print(1)'", CTX)
    assert any(e.kind == "exec" and e.argv0 == "python" and e.opaque for e in effects)
