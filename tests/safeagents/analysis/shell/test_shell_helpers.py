"""Unit tests of the shell analyser's helpers: expansions, options, chunking, hosts."""

from __future__ import annotations

import posixpath

import pytest

from safeagents._actions import AnalysisContext
from safeagents.analysis._shell._chunks import PARSE_LIMIT, masked, plan
from safeagents.analysis._shell._dispatch import handler_for
from safeagents.analysis._shell._expand import (
    brace_expand,
    decode_ansi_c,
    escape_for_braces,
    unescape_double_quoted,
    unescape_unquoted,
)
from safeagents.analysis._shell._interpreters import python as python_handler
from safeagents.analysis._shell._model import (
    MAX_EXPANSIONS,
    BudgetExhausted,
    command_basename,
    resolve_path,
)
from safeagents.analysis._shell._network import host_of
from safeagents.analysis._shell._options import parse, spec


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [
        ("a{b,c}d", ["abd", "acd"]),
        ("{a,b}{1,2}", ["a1", "a2", "b1", "b2"]),
        ("x{a,{b,c}}", ["xa", "xb", "xc"]),
        ("t{1..3}", ["t1", "t2", "t3"]),
        ("{3..1}", ["3", "2", "1"]),
        ("{0..6..3}", ["0", "3", "6"]),
        ("{a..c}", ["a", "b", "c"]),
        ("{single}", ["{single}"]),
        ("{a,b", ["{a,b"]),
        ("plain", ["plain"]),
        ("q" + escape_for_braces("{a,b}"), ["q{a,b}"]),
    ],
)
def test_brace_expand(pattern: str, expected: list[str]) -> None:
    assert brace_expand(pattern) == expected


def test_brace_expansion_past_the_cap_stops_the_analysis() -> None:
    assert len(brace_expand(f"{{1..{MAX_EXPANSIONS}}}")) == MAX_EXPANSIONS
    with pytest.raises(BudgetExhausted):
        brace_expand("{1..99999999999}")
    with pytest.raises(BudgetExhausted):
        brace_expand("{a,b}" * 20)
    assert brace_expand("x{}" * 20) == ["x{}" * 20]


def test_ansi_c_strings() -> None:
    assert decode_ansi_c(r"a\nb\t\x41\101\u00e9\'\\\q") == "a\nb\tAA\u00e9'\\\\q"


def test_unescaping() -> None:
    assert unescape_unquoted("a\\ b\\\nc\\") == "a bc\\"
    assert unescape_double_quoted('\\"\\$x\\a') == '"$x\\a'
    assert unescape_double_quoted('\\"\\$x', heredoc=True) == '\\"$x'


def test_options() -> None:
    parsed = parse(
        ["-n5", "-rf", "--lines", "3", "--x=y", "a", "--", "-b"], spec(("-n", "--lines"))
    )
    assert parsed.options == [("-n", "5"), ("-r", None), ("-f", None), ("--lines", "3"),
                              ("--x", "y")]  # fmt: skip
    assert parsed.operands == ["a", "-b"]
    assert parsed.indices == [5, 7]
    posix = parse(["-k", "5", "rm", "-f", "x"], spec(("-k",), posix=True))
    assert posix.operands == ["rm", "-f", "x"]


def test_short_scripts_parse_whole() -> None:
    result = plan(b"rm a; rm b")
    assert [(piece.start, piece.end, piece.parseable) for piece in result.pieces] == [(0, 10, True)]


def test_long_scripts_split_outside_quotes_and_heredocs() -> None:
    quoted = b"echo '" + b"a;b\n" * 1000 + b"'\n"
    heredoc = b"cat > f <<'EOF'\n" + b"x | y; z\n" * 1000 + b"EOF\n"
    script = (quoted + heredoc) * 4
    result = plan(script)
    cuts = {piece.end for piece in result.pieces}
    assert len(result.pieces) > 1 and not result.lossy
    for index in range(4):
        base = index * len(quoted + heredoc)
        assert all(not base < cut < base + len(quoted) for cut in cuts)
        assert all(not base + len(quoted) < cut < base + len(quoted + heredoc) for cut in cuts)
    assert all(
        piece.end - piece.start <= PARSE_LIMIT or piece.text_spans for piece in result.pieces
    )


def test_splitting_a_pipeline_is_lossy_and_unsplittable_code_is_not_parsed() -> None:
    assert plan(b"a | " * 5000).lossy
    assert not plan(b"x" * (PARSE_LIMIT + 10)).pieces[0].parseable


def test_masking_keeps_offsets_and_newlines() -> None:
    source = b"echo 'ab\ncd' x"
    out = masked(source, ((5, 12),))
    assert len(out) == len(source) and out[:6] == b"echo '" and out[8:9] == b"\n"
    assert out[-3:] == b"' x"


@pytest.mark.parametrize(
    ("url", "host"),
    [
        ("https://User@Example.com:8080/x", "example.com"),
        ("git@github.com:o/r.git", "github.com"),
        ("example.org/path", "example.org"),
        ("origin", None),
        ("./local/path", None),
        ("http://[::1", None),
    ],
)
def test_host_of(url: str, host: str | None) -> None:
    assert host_of(url) == host


def test_option_specs_are_built_once_per_argument() -> None:
    assert spec(("-n", "--lines")) is spec(("-n", "--lines"))
    assert spec(("-n",), posix=True) is not spec(("-n",))
    assert spec(["-n"]).valued == frozenset({"-n"})


@pytest.mark.parametrize(
    "raw", ["t.py", "./a/../b", "~/x", "$HOME/y", "/abs//p/", "..", "", " sp ace ", "\u00e9/\u00e8"]
)
@pytest.mark.parametrize("cwd", ["/workspace", "/", "/w/\u00e9"])
def test_memoised_path_resolution_matches_the_context(raw: str, cwd: str) -> None:
    ctx = AnalysisContext(cwd=cwd, home="/home/u")
    assert resolve_path(ctx, raw) == ctx.resolve(raw)
    assert resolve_path(ctx, raw) == ctx.resolve(raw)


@pytest.mark.parametrize(
    ("text", "name"),
    [("rm", "rm"), ("/usr/bin/rm", "rm"), ("./run.sh", "run.sh"), ("dir/", "dir"), ("/", "/"),
     ("//", "//"), ("a//b//", "b")],
)  # fmt: skip
def test_command_basename(text: str, name: str) -> None:
    assert command_basename(text) == name
    assert command_basename(text) == (posixpath.basename(text.rstrip("/")) or text)


def test_python_interpreters_are_recognised_by_name() -> None:
    for name in ("python", "python3", "python3.11", "pypy3", "python3.13t"):
        assert handler_for(name) is python_handler
    for name in ("pythonx", "ipython", "xpython3"):
        assert handler_for(name) is None
    assert handler_for("rm") is not None and handler_for("rm") is handler_for("rm")
