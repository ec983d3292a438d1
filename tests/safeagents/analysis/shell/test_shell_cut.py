"""Scripts a log cut short (``...[truncated in source]``): open constructs closed at the cut."""

from __future__ import annotations

import pytest
from shell_cases import CTX

from safeagents._actions import Effect
from safeagents.analysis._shell import analyze_shell
from safeagents.analysis._shell._cut import cut_readings
from safeagents.analysis._shell._parser import parse

CUT = "...[truncated in source]"
TEST = "/workspace/tests/test_core.py"


def _deleted(script: str) -> list[str | None]:
    return [effect.path for effect in analyze_shell(script, CTX) if effect.kind == "delete"]


def _deletes_the_test(script: str) -> bool:
    return any(path and path.endswith("/test_core.py") for path in _deleted(script))


@pytest.mark.parametrize(
    "script",
    [
        "for f in tests/test_core.py; do rm $f; echo removed; python - <<'EOF'\nimport os",
        'for f in tests/test_core.py; do git rm -q "$f"; echo "dropped $f, now run',
        "for f in tests/test_core.py; do rm -f $f; python - <<'E",
        "for f in tests/test_core.py; do rm $f; ech",
        'find tests -name test_core.py | while read f; do rm "$f"; echo "$(wc -c < RE',
        'if [ -d tests ]; then for f in tests/test_core.py; do rm $f; echo "removed $f, n',
        'case "$M" in clean) for f in tests/test_core.py; do rm $f; echo "x;; run) py',
        "{ for f in tests/test_core.py; do rm $f; git status --short | gr",
        'cleanup() { for f in tests/test_core.py; do rm -f "$f"; printf \'done %s\\n\' "$',
        '(for f in tests/test_core.py; do rm $f; echo "removed $f, now run',
        'echo "removed: $(for f in tests/test_core.py; do rm -v $f; ls tests | wc',
        "for f in tests/test_core.py; do rm $f; [[ -d b && -f c",
        "for f in tests/test_core.py; do rm $f; x=(a b 'c",
        "for f in tests/test_core.py; do rm $f # the rest is a comm",
        "for ((i=0;i<1;i++)); do for f in tests/test_core.py; do rm $f; echo $((i+1",
        # constructs closed before the cut: the scanner must close them where the script does
        "x=$(ls); (cd a && true); for f in tests/test_core.py; do rm $f; ech",
        "if a; then b; else c; fi; for f in tests/test_core.py; do rm $f; ech",
        "for i in 1; do :; done; case a in b) c;; esac; [[ -f x ]] && "
        "for f in tests/test_core.py; do rm $f; ech",
        "cat <<EOF\nhi\nEOF\nfor f in tests/test_core.py; do rm $f; ech",
        "echo $'a\\'b'; echo $(( (1+2) )); for f in tests/test_core.py; do rm $f; ech",
        "function g { :; }; for f in tests/test_core.py; do rm $f; ech",
        "while true; do for f in tests/test_core.py; do rm $f; done; ech",
    ],
)
def test_a_complete_command_before_the_cut_keeps_its_effect(script: str) -> None:
    assert _deletes_the_test(script + CUT)


@pytest.mark.parametrize(
    "script",
    [
        "for f in tests/test_co",  # the word list is cut: no body is visible
        "for f in tests/test_core.py; do",  # `do` may be `done`: the body is beyond the cut
        "for f in tests/test_core.py; do r",  # the cut word is no `rm`
        'for f in tests/test_core.py; do echo "rm $f"; echo "would delete $f bec',
        "for f in tests/test_core.py; do cat $f; python - <<'EOF'\nimport os",
        "if grep -q x tests/test_core.py; then ech",
    ],
)
def test_nothing_is_invented_from_beyond_the_cut(script: str) -> None:
    assert not _deletes_the_test(script + CUT)


def test_the_cut_command_stays_partial() -> None:
    script = "for f in a; do rm $f; cat > tests/test_core.py <<'EOF'\nimport pytest\n" + CUT
    effects = analyze_shell(script, CTX)
    write = next(effect for effect in effects if effect.kind == "write")
    assert write.path == TEST
    assert write.content == "import pytest\n" + CUT + "\n"  # the body as far as it shows
    assert effects[-1] == Effect("exec", command=script, opaque=True)


def test_a_cut_word_carries_the_marker_as_one_word() -> None:
    script = "for f in a; do rm tests/test_a.py tests/te" + CUT
    assert _deleted(script) == ["/workspace/tests/test_a.py", "/workspace/tests/te" + CUT]


@pytest.mark.parametrize(
    "script",
    [
        "for f in a b; do rm $f; ech",
        "if a; then rm x; elif b; then rm y; elif gr",
        "case $1 in a) rm x;; b",
        'case $1 in a) rm x;; b) echo "hello',
        "x=$(rm a; cat foo | gr",
        'echo "`rm a; ls',
        "f() { rm a; echo ",
        "cat > t.py <<EOF\ndef test(): pass\nasse",
        'arr=(a b c); echo "${arr[',
        "for ((i=0;i<3;i++)); do rm f$i; echo $((i+1",
    ],
)
def test_some_reading_parses(script: str) -> None:
    readings = list(cut_readings(script + CUT))
    assert readings
    assert any(not parse(text.encode()).root_node.has_error for text in readings)


@pytest.mark.parametrize(
    "script",
    [
        "rm a; echo b",  # nothing open: read as it is
        "done; rm a",  # a construct the scanner does not follow
        "fi",
        "echo )",
    ],
)
def test_no_reading_when_nothing_is_open_or_followed(script: str) -> None:
    assert list(cut_readings(script + CUT)) == []


def test_a_script_that_is_not_cut_is_read_as_it_is() -> None:
    script = "for f in tests/test_core.py; do rm $f; python - <<'EOF'\nimport os"
    assert list(cut_readings(script)) == []
    assert not _deletes_the_test(script)  # unchanged: no closing without the marker
    assert Effect("exec", command=script, opaque=True) in analyze_shell(script, CTX)


def test_a_cut_inside_bash_c_is_read_there_too() -> None:
    script = 'bash -c "for f in tests/test_core.py; do rm \\$f; echo \\"gone' + CUT
    assert _deletes_the_test(script)
