"""``safeagents store migrate`` and ``--store postgresql://…`` / ``$SAFEAGENTS_STORE`` on the
command line, against a real PostgreSQL server."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from safeagents.cli import main
from safeagents.store import SessionUpdate, SQLiteStore, TurnRecord


def _fill(path: Path) -> None:
    async def fill() -> None:
        store = SQLiteStore(path)
        for name in ("alpha", "beta"):
            update = SessionUpdate(name, "pi", "chat", "/w", "m", "root", tool_calls=1)
            turn = TurnRecord(name, "e", 0, "main", "ok", "chat", "pi", "m", False, {}, {})
            await store.record_exchange(update, [turn])
        await store.close()

    asyncio.run(fill())


def test_migrate_copies_and_the_session_commands_read_the_copy(
    tmp_path: Path,
    postgres_url: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    path = tmp_path / "s.db"
    _fill(path)
    assert main(["store", "migrate", "--from", f"sqlite:{path}", "--to", postgres_url]) == 0
    out = capsys.readouterr().out
    assert "2 sessions" in out and "2 copied" in out and "turns 2" in out
    assert main(["store", "migrate", "--from", str(path), "--to", postgres_url]) == 0
    assert "0 copied, 2 already there" in capsys.readouterr().out
    assert main(["sessions", "list", "--format", "json", "--store", postgres_url]) == 0
    listed = json.loads(capsys.readouterr().out)["sessions"]
    assert sorted(s["id"] for s in listed) == ["alpha", "beta"]
    monkeypatch.setenv("SAFEAGENTS_STORE", postgres_url)
    assert main(["sessions", "show", "alp", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["id"] == "alpha"


def test_migrate_and_serve_refuse_what_they_cannot_use(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["store", "migrate", "--from", str(tmp_path / "a.db"), "--to", "x.db"]) == 2
    assert "--to names a PostgreSQL database" in capsys.readouterr().err
    missing = tmp_path / "missing.db"
    target = "postgresql://u@127.0.0.1:1/db"
    assert main(["store", "migrate", "--from", str(missing), "--to", target]) == 2
    captured = capsys.readouterr()
    assert f"no SQLite store at {missing}" in captured.err and "copying" not in captured.err
    unreachable = "postgresql://u:s3cret@127.0.0.1:1/db"
    code = main(["serve", "--upstream", "http://127.0.0.1:9/v1", "--store", unreachable])
    err = capsys.readouterr().err
    assert code == 2 and "cannot use the store" in err and "Traceback" not in err
    assert "s3cret" not in err


def test_help_shows_the_default_store_without_its_password(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SAFEAGENTS_STORE", "postgresql://u:s3cret@db.example/runs")
    with pytest.raises(SystemExit):
        main(["sessions", "list", "--help"])
    out = capsys.readouterr().out
    assert "s3cret" not in out and "postgresql://u:***@db.example/runs" in " ".join(out.split())
