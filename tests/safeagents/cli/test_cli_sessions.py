"""``sessions list`` and ``show`` for people: ids never cut, a unique prefix is enough."""

from __future__ import annotations

import asyncio
import io
import re
from pathlib import Path

import pytest
from rich.console import Console

from safeagents.cli import main
from safeagents.store import open_store, print_sessions

IDS = (
    "opencode-20261203-113000-0123456789abcdef0123456789abcdef",
    "opencode-20261203-113000-fedcba9876543210fedcba9876543210",
    "pi-20261203-114500-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
)


@pytest.fixture(params=["sqlite", "postgres"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A store of each backend holding the sessions of ``IDS``."""
    if request.param == "sqlite":
        location = str(tmp_path / "s.db")
    else:
        location = request.getfixturevalue("postgres_server").database()

    async def fill() -> None:
        opened = open_store(location)
        try:
            for session_id in IDS:
                harness = session_id.partition("-")[0]
                await opened.open_session(session_id, cwd="/workspace", harness=harness)
        finally:
            await opened.close()

    asyncio.run(fill())
    return location


def listing(store: str, console: Console) -> str:
    async def read() -> None:
        opened = open_store(store)
        try:
            print_sessions(console, await opened.list_sessions())
        finally:
            await opened.close()

    asyncio.run(read())
    assert isinstance(console.file, io.StringIO)
    return console.file.getvalue()


@pytest.mark.parametrize("width", [40, 80, 200])
def test_a_narrow_terminal_never_cuts_an_id_or_a_header(store: str, width: int) -> None:
    out = listing(store, Console(file=io.StringIO(), width=width, force_terminal=True))
    plain = re.sub(r"\x1b\[[0-9;]*m", "", out)
    for session_id in IDS:
        assert session_id in plain
    assert "harness" in plain and "…" not in plain


def test_piped_output_is_plain_one_session_a_line(store: str) -> None:
    out = listing(store, Console(file=io.StringIO()))  # not a terminal: as through a pipe
    assert "\x1b[" not in out
    lines = out.splitlines()
    assert lines[0].split() == [
        "session",
        "harness",
        "verdict",
        "calls",
        "turns",
        "outcome",
        "updated",
    ]
    for session_id in IDS:
        [line] = [line for line in lines if session_id in line]
        assert line.split()[:3] == [session_id, session_id.partition("-")[0], "clean"]


def test_show_takes_a_unique_prefix(store: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sessions", "show", "pi-2026", "--store", store, "--format", "json"]) == 0
    assert f'"id": "{IDS[2]}"' in capsys.readouterr().out
    assert main(["sessions", "show", "opencode-", "--store", store]) == 2
    err = capsys.readouterr().err
    assert "2 sessions in" in err and "start with 'opencode-'" in err and "give more" in err
    assert main(["sessions", "show", "codex", "--store", store]) == 2
    assert "no session 'codex'" in capsys.readouterr().err
