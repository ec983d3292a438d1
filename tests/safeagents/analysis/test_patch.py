"""apply_patch envelopes, unified diffs and find/replace edits to effects."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from safeagents._actions import AnalysisContext, Effect
from safeagents.analysis._patch import edit_effect, parse_patch, write_effect

CTX = AnalysisContext(cwd="/workspace", home="/root")


def _write(path: str, **fields: object) -> Effect:
    return Effect("write", path=path, **fields)  # type: ignore[arg-type]


ENVELOPES: list[tuple[str, str, list[Effect]]] = [
    (
        "add file",
        "*** Begin Patch\n*** Add File: tests/test_new.py\n+def test_a():\n+    assert f() == 1\n"
        "*** End Patch\n",
        [
            _write(
                "/workspace/tests/test_new.py",
                content="def test_a():\n    assert f() == 1",
                added="def test_a():\n    assert f() == 1",
                removed="",
                new_file=True,
            )
        ],
    ),
    (
        "delete file",
        "*** Begin Patch\n*** Delete File: tests/test_math.py\n*** End Patch",
        [Effect("delete", path="/workspace/tests/test_math.py")],
    ),
    (
        "update file",
        "*** Begin Patch\n*** Update File: src/calc.py\n@@ def add(a, b):\n"
        "-    return a - b\n+    return a + b\n     # end\n*** End Patch",
        [
            _write(
                "/workspace/src/calc.py",
                content=None,
                added="    return a + b",
                removed="    return a - b",
            )
        ],
    ),
    (
        "update with move",
        "*** Begin Patch\n*** Update File: tests/test_x.py\n*** Move to: attic/test_x.py\n"
        "@@\n-x = 1\n+x = 2\n*** End of File\n*** End Patch",
        [
            Effect("move", path="/workspace/tests/test_x.py", dest="/workspace/attic/test_x.py"),
            _write("/workspace/attic/test_x.py", added="x = 2", removed="x = 1"),
        ],
    ),
    (
        "heredoc wrapped, indented markers, missing end patch",
        "apply_patch <<'PATCH'\n  *** Begin Patch  \n  *** Delete File: tests/test_a.py\n"
        "*** Update File: src/a.py\n@@\n+x\nPATCH\necho after\n",
        [
            Effect("delete", path="/workspace/tests/test_a.py"),
            _write("/workspace/src/a.py", added="x", removed=""),
        ],
    ),
    (
        "starts with an apply_patch line",
        "apply_patch\n*** Begin Patch\n*** Add File: notes.txt\n+hi\n",
        [_write("/workspace/notes.txt", content="hi", added="hi", removed="", new_file=True)],
    ),
    (
        "absolute path",
        "*** Begin Patch\n*** Delete File: /tests/test_hidden.py\n*** End Patch",
        [Effect("delete", path="/tests/test_hidden.py")],
    ),
    (
        "dot-dot spelling is normalised",
        "*** Begin Patch\n*** Delete File: ./a/../tests/x.py\n*** End Patch",
        [Effect("delete", path="/workspace/tests/x.py")],
    ),
    (
        "symbol fork: the part before :: is the path",
        "*** Begin Patch\n*** Replace Symbol Body: src/m.py::Foo.bar\n+    return 1\n"
        "*** Insert After Symbol: tests/t.py::test_a\n+def test_b(): pass\n*** End Patch",
        [
            _write("/workspace/src/m.py", added="    return 1", removed=""),
            _write("/workspace/tests/t.py", added="def test_b(): pass", removed=""),
        ],
    ),
    (
        "heredoc terminator look-alike inside a hunk stays content",
        "cat <<EOF | apply_patch\n*** Begin Patch\n*** Update File: a.sh\n@@\n"
        " EOF\n-old\n+new\nEOF\n",
        [_write("/workspace/a.sh", added="new", removed="old")],
    ),
]


@pytest.mark.parametrize(
    ("text", "expected"), [(t, e) for _, t, e in ENVELOPES], ids=[n for n, _, _ in ENVELOPES]
)
def test_apply_patch_envelopes(text: str, expected: list[Effect]) -> None:
    assert parse_patch(text, CTX) == expected


def test_paths_resolve_against_the_context_cwd() -> None:
    ctx = AnalysisContext(cwd="/repo/sub")
    effects = parse_patch("*** Begin Patch\n*** Delete File: ../tests/t.py\n*** End Patch", ctx)
    assert effects == [Effect("delete", path="/repo/tests/t.py")]


UNIFIED: list[tuple[str, str, list[Effect]]] = [
    (
        "git modification",
        "diff --git a/tests/test_m.py b/tests/test_m.py\nindex 1a..2b 100644\n"
        "--- a/tests/test_m.py\n+++ b/tests/test_m.py\n@@ -1,3 +1,3 @@\n def test_f():\n"
        "-    assert f(2) == 4\n+    assert f(2) == 5\n \n",
        [
            _write(
                "/workspace/tests/test_m.py",
                added="    assert f(2) == 5",
                removed="    assert f(2) == 4",
            )
        ],
    ),
    (
        "new, deleted and renamed files",
        "diff --git a/n.py b/n.py\nnew file mode 100644\n--- /dev/null\n+++ b/n.py\n"
        "@@ -0,0 +1,2 @@\n+a\n+b\n"
        "diff --git a/tests/gone.py b/tests/gone.py\ndeleted file mode 100644\n"
        "--- a/tests/gone.py\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n"
        "diff --git a/tests/t.py b/attic/t.py\nsimilarity index 100%\n"
        "rename from tests/t.py\nrename to attic/t.py\n",
        [
            _write("/workspace/n.py", content="a\nb", added="a\nb", removed="", new_file=True),
            Effect("delete", path="/workspace/tests/gone.py"),
            Effect("move", path="/workspace/tests/t.py", dest="/workspace/attic/t.py"),
        ],
    ),
    (
        "rename with edits",
        "diff --git a/a.py b/b.py\nsimilarity index 80%\nrename from a.py\nrename to b.py\n"
        "--- a/a.py\n+++ b/b.py\n@@ -1 +1 @@\n-1\n+2\n",
        [
            Effect("move", path="/workspace/a.py", dest="/workspace/b.py"),
            _write("/workspace/b.py", added="2", removed="1"),
        ],
    ),
    (
        "plain diff -u without git headers, timestamps, no prefixes",
        "--- tests/t.py.orig\t2024-01-01 00:00:00\n+++ tests/t.py\t2024-01-02 00:00:00\n"
        "@@ -1 +1 @@\n-a\n+b\n",
        [_write("/workspace/tests/t.py", added="b", removed="a")],
    ),
    (
        "diff inside prose and a markdown fence",
        "I fixed it like this:\n\n```diff\n--- a/src/x.py\n+++ b/src/x.py\n@@ -2,2 +2,2 @@\n"
        " keep\n-old\n+new\n```\nThat should pass now.\n- a bullet point\n",
        [_write("/workspace/src/x.py", added="new", removed="old")],
    ),
    (
        "bare @@ hunks (model-written) end at non-diff lines",
        "--- a/t.py\n+++ b/t.py\n@@\n-x\n+y\n\n context\nthanks\n-not part of the diff\n",
        [_write("/workspace/t.py", added="y", removed="x")],
    ),
    (
        "counted hunk reads '--- ' lines as removals",
        "--- a/t.py\n+++ b/t.py\n@@ -1,2 +1 @@\n--- x\n-y\n+z\n",
        [_write("/workspace/t.py", added="z", removed="-- x\ny")],
    ),
    (
        "two files without git headers",
        "--- a/one.py\n+++ b/one.py\n@@ -1 +1 @@\n-1\n+2\n"
        "--- /dev/null\n+++ b/two.py\n@@ -0,0 +1 @@\n+new\n",
        [
            _write("/workspace/one.py", added="2", removed="1"),
            _write("/workspace/two.py", content="new", added="new", removed="", new_file=True),
        ],
    ),
    (
        "binary change",
        "diff --git a/img.png b/img.png\nindex 1..2 100644\nBinary files a/img.png and "
        "b/img.png differ\n",
        [_write("/workspace/img.png", added=None, removed=None)],
    ),
    (
        "mode-only change touches no content",
        "diff --git a/run.sh b/run.sh\nold mode 100644\nnew mode 100755\n",
        [],
    ),
]


@pytest.mark.parametrize(
    ("text", "expected"), [(t, e) for _, t, e in UNIFIED], ids=[n for n, _, _ in UNIFIED]
)
def test_unified_diffs(text: str, expected: list[Effect]) -> None:
    assert parse_patch(text, CTX) == expected


@pytest.mark.parametrize(
    "text",
    ["", "hello world", "--- just a separator\nnot a diff", "*** bold ***", "@@ -1 +1 @@\n-a\n+b"],
)
def test_text_without_a_patch_has_no_effects(text: str) -> None:
    assert parse_patch(text, CTX) == []


def test_oversized_patch_is_cut_not_ignored() -> None:
    text = "*** Begin Patch\n*** Delete File: tests/t.py\n" + "x" * 3_000_000
    assert parse_patch(text, CTX) == [Effect("delete", path="/workspace/tests/t.py")]


def test_edit_effect_on_an_assertion_change() -> None:
    old = "def test_f():\n    assert f(2) == 4\n    assert f(3) == 6\n"
    new = "def test_f():\n    assert f(2) == 5\n    assert f(3) == 6\n"
    effect = edit_effect("tests/test_f.py", old, new, CTX)
    assert effect == _write(
        "/workspace/tests/test_f.py",
        content=None,
        added="    assert f(2) == 5",
        removed="    assert f(2) == 4",
        new_file=False,
    )


@pytest.mark.parametrize(
    ("old", "new", "removed", "added"),
    [
        ("a\nb\nc", "a\nc", "b", ""),
        ("a\nc", "a\nb\nc", "", "b"),
        ("x = 1", "x = 2", "x = 1", "x = 2"),
        ("same", "same", "", ""),
        ("  keep indent\n", "\tkeep indent\n", "  keep indent", "\tkeep indent"),
        ("a\nb\nc\nd", "a\nB\nc\nD", "b\nd", "B\nD"),
    ],
)
def test_edit_effect_changed_lines(old: str, new: str, removed: str, added: str) -> None:
    effect = edit_effect("f.py", old, new, CTX, replace_all=True)
    assert (effect.removed, effect.added) == (removed, added)


def test_edit_effect_with_huge_inputs_stays_fast_and_exact_at_the_edges() -> None:
    old = "\n".join(f"line {i}" for i in range(5000))
    new = "\n".join(f"LINE {i}" for i in range(5000))
    effect = edit_effect("big.py", "head\n" + old + "\ntail", "head\n" + new + "\ntail", CTX)
    assert effect.removed == old
    assert effect.added == new


def test_empty_old_string_creates_or_overwrites() -> None:
    effect = edit_effect("tests/conftest.py", "", "import pytest\n", CTX)
    assert effect == _write(
        "/workspace/tests/conftest.py",
        content="import pytest\n",
        added="import pytest\n",
        removed=None,
        new_file=False,
    )


def test_write_effect() -> None:
    assert write_effect("~/x.txt", "hi", CTX, new_file=True) == _write(
        "/root/x.txt", content="hi", added="hi", removed=None, new_file=True
    )


@settings(max_examples=200, deadline=None)
@given(st.text() | st.binary().map(lambda raw: raw.decode("latin-1")))
def test_parse_patch_never_raises(text: str) -> None:
    for effect in parse_patch(text, CTX):
        assert effect.path is not None and effect.path.startswith("/")


PATCHY = st.lists(
    st.sampled_from(
        [
            "*** Begin Patch",
            "*** Add File: a.py",
            "*** Update File: b.py",
            "*** Delete File: ",
            "*** Move to: c.py",
            "*** End Patch",
            "@@",
            "@@ -1,2 +1 @@",
            "+x",
            "-y",
            " z",
            "diff --git a/d b/d",
            "--- a/d",
            "+++ b/d",
            "--- /dev/null",
            "+++ /dev/null",
            "rename from e",
            "rename to f",
            "<<'EOF'",
            "EOF",
        ]
    ),
    max_size=30,
)


@settings(max_examples=200, deadline=None)
@given(PATCHY)
def test_patch_shaped_noise_never_raises(lines: list[str]) -> None:
    for effect in parse_patch("\n".join(lines), CTX):
        assert effect.kind in ("write", "delete", "move")
