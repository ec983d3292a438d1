"""How fast the console's sessions list answers over 100,000 sessions (goal: < 200 ms).

Fills a SQLite store through the real schema (sessions, main and re-ask turns, findings on the
hacked ones, outcomes on most), then times, for each filter of the list:

- ``page``: the whole page, ``GET /ui/?…`` through the console app (query, totals, render);
- ``query``: the store's part alone (``query_sessions`` + ``session_totals``);
- baselines in the same run: the same statements on a copy of the store without the console's
  indexes (``sessions (updated)`` instead, as before); the page with its totals counted from
  the findings and turns tables rather than the per-session counters (``counted``, which also
  checks that both agree); and the admin API's ``list_sessions`` (50 sessions, no filter,
  no totals).

    .venv/bin/python bench/console_bench.py [--sessions N] [--runs N] [--store PATH]

Prints medians and p90s in milliseconds.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import httpx

from safeagents import Firewall
from safeagents.console import PAGE_SIZE, parse_list, standalone_app
from safeagents.exchange import Credentials, ProxyConfig
from safeagents.store import (
    SessionQuery,
    SQLiteStore,
    sqlite_query_sessions,
    sqlite_session_totals,
    sqlite_where,
)

HARNESSES = ("pi", "opencode", "codex", "claude-code", "hermes")
RULES = tuple(f"bench-rule-{n:02d}" for n in range(20))
RARE_RULE = "bench-rule-rare"
CONSOLE_INDEXES = ("sessions_for_console", "findings_by_rule")
FILTERS: tuple[tuple[str, dict[str, str]], ...] = (
    ("all", {}),
    ("hacked", {"hacked": "yes"}),
    ("harness", {"harness": "hermes"}),
    ("rule (common)", {"rule": RULES[0]}),
    ("rule (rare)", {"rule": RARE_RULE}),
    ("outcome", {"outcome": "success"}),
    ("since (last day)", {"since": "@day"}),
    ("id prefix", {"q": "s-0004"}),
    ("page 1000", {"page": "1000"}),
    ("combined", {"hacked": "yes", "harness": "pi", "rule": RULES[1], "outcome": "failure"}),
)


def fill(path: Path, sessions: int, seed: int = 7) -> float:
    """Write ``sessions`` sessions into a new store at ``path``; the newest update time."""
    asyncio.run(_create(path))
    rng = random.Random(seed)
    now = time.time()
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("BEGIN")
    request = json.dumps({"model": "m", "messages": [{"role": "user", "content": "fix it"}]})
    response = json.dumps({"choices": [{"message": {"role": "assistant", "content": "ok"}}]})
    session_rows, turn_rows, finding_rows, outcome_rows = [], [], [], []
    turn_id = 0
    for n in range(sessions):
        sid = f"s-{n:07d}"
        updated = now - (sessions - n) * 30.0  # one every 30 s: ~35 days
        rare = n % 10_000 == 5_000  # ten sessions in 100,000
        hacked = rare or rng.random() < 0.12
        calls = rng.randint(1, 40)
        turns = 2 if hacked else 1
        harness = rng.choice(HARNESSES)
        outcome = None
        if rng.random() < 0.8:
            outcome = {"success": rng.random() < 0.6, "reward": rng.random()}
            outcome_rows.append((sid, updated, json.dumps(outcome)))
        success = None if outcome is None else int(outcome["success"])
        session_rows.append(
            (
                sid,
                harness,
                "chat",
                "/workspace",
                "m",
                updated - 60,
                updated,
                int(hacked),
                calls,
                turns,
                int(hacked),
                turns - 1,
                success,
            )
        )
        for seq in range(1, turns + 1):
            turn_id += 1
            kind = "reask" if seq == 2 else "main"
            turn_rows.append(
                (
                    turn_id,
                    sid,
                    seq,
                    "e",
                    seq - 1,
                    kind,
                    "ok",
                    "chat",
                    harness,
                    "m",
                    0,
                    request,
                    response,
                    updated - 1,
                    updated,
                )
            )
        if hacked:
            rules = rng.sample(RULES, rng.randint(1, 3))
            if rare:
                rules = [RARE_RULE]
            for rule in rules:
                finding_rows.append(
                    (
                        sid,
                        turn_id - 1,
                        rule,
                        "c",
                        "high",
                        "reject",
                        f"call_{n}",
                        "bash",
                        "rm x",
                        "Blocked by safeagents",
                        1,
                    )
                )
    db.executemany(
        "INSERT INTO sessions (id, harness, dialect, cwd, model, created, updated, hacked, "
        "tool_calls, turns, blocked_calls, reasks, success) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        session_rows,
    )
    db.executemany(
        "INSERT INTO turns (id, session_id, seq, exchange, attempt, kind, status, dialect, "
        "harness, model, stream, request, response, started, ended) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        turn_rows,
    )
    db.executemany(
        "INSERT INTO findings (session_id, turn_id, rule_id, category, severity, action, "
        "tool_call_id, tool, summary, message, blocked) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        finding_rows,
    )
    db.executemany(
        "INSERT INTO outcomes (session_id, posted, outcome) VALUES (?, ?, ?)", outcome_rows
    )
    db.execute("COMMIT")
    db.execute("ANALYZE")
    db.close()
    return now


async def _create(path: Path) -> None:
    store = SQLiteStore(path)
    await store.aliases()  # creates the schema
    await store.close()


def _params(given: dict[str, str], now: float) -> dict[str, str]:
    if given.get("since") == "@day":
        moment = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now - 86_400))
        return {**given, "since": moment}
    return given


def _stats(samples: list[float]) -> str:
    ordered = sorted(samples)
    p90 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.9))]
    return f"{statistics.median(ordered) * 1000:8.1f} {p90 * 1000:8.1f}"


async def _timed(runs: int, action: Callable[[], Awaitable[object]]) -> list[float]:
    await action()  # warm the page cache and the templates
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        await action()
        samples.append(time.perf_counter() - start)
    return samples


def counted(db: sqlite3.Connection, query: SessionQuery) -> tuple[int, ...]:
    """The totals counted from the findings and turns tables (no per-session counters)."""
    where, params = sqlite_where(query)
    within = f" AND session_id IN (SELECT id FROM sessions{where})" if where else ""
    sessions, calls = db.execute(
        f"SELECT COUNT(*), COALESCE(SUM(tool_calls), 0) FROM sessions{where}", params
    ).fetchone()
    (blocked,) = db.execute(
        "SELECT COUNT(*) FROM (SELECT DISTINCT session_id, tool_call_id FROM findings "
        f"WHERE blocked = 1{within})",
        params,
    ).fetchone()
    (reasks,) = db.execute(
        f"SELECT COUNT(*) FROM turns WHERE kind = 'reask'{within}", params
    ).fetchone()
    return sessions, calls, blocked, reasks


def _sql_timed(
    runs: int, db: sqlite3.Connection, params: dict[str, str], *, counters: bool = True
) -> list[float]:
    listed = parse_list(params)
    samples = []
    for attempt in range(runs + 1):
        start = time.perf_counter()
        sqlite_query_sessions(db, listed.query, PAGE_SIZE + 1, listed.offset)
        if counters:
            sqlite_session_totals(db, listed.query)
        else:
            counted(db, listed.query)
        if attempt:
            samples.append(time.perf_counter() - start)
    return samples


async def measure(path: Path, now: float, runs: int, bare: Path) -> list[str]:
    store = SQLiteStore(path)
    credentials = Credentials(ProxyConfig(upstream="http://127.0.0.1/"))
    app = standalone_app(store, Firewall.load(), credentials)
    lines = [
        f"{'filter':<18} {'matches':>8} | {'page p50':>8} {'p90':>8} | {'query p50':>9} {'p90':>8}"
        f" | {'no-index p50':>12} {'p90':>8} | {'counted p50':>11} {'p90':>8}"
    ]
    unindexed = sqlite3.connect(bare)
    indexed = sqlite3.connect(path)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://console") as client:
        for name, given in FILTERS:
            params = _params(given, now)
            listed = parse_list(params)

            async def get_page(params: dict[str, str] = params) -> object:
                response = await client.get("/ui/", params=params)
                assert response.status_code == 200, response.text[:300]
                return response

            async def query(listed: object = listed) -> object:
                await store.query_sessions(listed.query, limit=PAGE_SIZE + 1, offset=listed.offset)  # type: ignore[attr-defined]
                return await store.session_totals(listed.query)  # type: ignore[attr-defined]

            page = await _timed(runs, get_page)
            queried = await _timed(runs, query)
            bare_runs = _sql_timed(max(3, runs // 4), unindexed, params)
            counting = _sql_timed(max(3, runs // 4), indexed, params, counters=False)
            totals = await store.session_totals(listed.query)
            assert counted(indexed, listed.query) == (
                totals.sessions,
                totals.tool_calls,
                totals.blocked_calls,
                totals.reasks,
            )
            lines.append(
                f"{name:<18} {totals.sessions:>8} | {_stats(page)} | {_stats(queried):>18}"
                f" | {_stats(bare_runs):>21} | {_stats(counting):>20}"
            )
        admin = await _timed(runs, lambda: store.list_sessions(limit=PAGE_SIZE))
        lines.append(f"admin API list_sessions(limit=50), no filter/totals: {_stats(admin)} ms")
    await store.close()
    unindexed.close()
    indexed.close()
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sessions", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--store", type=Path, help="keep the filled store here")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as scratch:
        path = args.store or Path(scratch) / "console.db"
        started = time.perf_counter()
        now = fill(path, args.sessions)
        print(f"filled {args.sessions} sessions in {time.perf_counter() - started:.1f} s")
        bare = Path(scratch) / "no-index.db"
        shutil.copy(path, bare)
        with sqlite3.connect(bare) as db:
            for index in CONSOLE_INDEXES:  # back to the indexes before the console
                db.execute(f"DROP INDEX {index}")
            db.execute("CREATE INDEX sessions_by_update ON sessions (updated)")
            db.execute("ANALYZE")
        for line in asyncio.run(measure(path, now, args.runs, bare)):
            print(line)
    print("ms; page = GET /ui/?… whole (query, totals, render); query = the store's part")
    return 0


if __name__ == "__main__":
    sys.exit(main())
