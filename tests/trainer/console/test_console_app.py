"""The training section mounted as the console mounts it: the list, a run's page, its live
events while the log grows, an evaluation, and bad input answered clearly (never a 500)."""

from __future__ import annotations

import json
import re
import threading
import time
from pathlib import Path

import httpx
import pytest
from console_kit import keep_version, write_eval, write_steps
from starlette.applications import Starlette
from starlette.routing import Mount
from starlette.testclient import TestClient

from safeagents import Firewall
from safeagents._thread_server import ThreadedServer
from safeagents.console import standalone_app
from safeagents.exchange import Credentials, ProxyConfig
from safeagents.store import SQLiteStore
from trainer._console import training_app
from trainer._plugin import safeagents_console_sections

PREFIX = "/ui/training"


def client(roots: list[Path], **settings: float) -> TestClient:
    app = Starlette(routes=[Mount(PREFIX, training_app(roots, **settings))])
    return TestClient(app, raise_server_exceptions=False)


def points(page: str, series: str) -> int:
    """The points drawn for ``series`` in ``page``'s charts."""
    groups = re.findall(rf'data-series="{series}">(.*?)</g>', page, flags=re.S)
    return sum(group.count("<circle") for group in groups)


def events(body: str) -> list[dict[str, str]]:
    parsed = []
    for block in body.split("\n\n"):
        event: dict[str, str] = {}
        for line in block.splitlines():
            name, _, value = line.partition(": ")
            if name in ("event", "id"):
                event[name] = value
            elif name == "data":
                event["data"] = event.get("data", "") + ("\n" if "data" in event else "") + value
        if "event" in event:
            parsed.append(event)
    return parsed


@pytest.fixture
def runs(tmp_path: Path) -> Path:
    out = tmp_path / "runs" / "exp1"
    write_steps(out, range(1, 6))
    keep_version(out, 2, step=4)
    write_eval(out)
    return tmp_path / "runs"


def test_the_plugin_adds_the_training_section(runs: Path) -> None:
    (section,) = safeagents_console_sections([runs])
    assert (section.title, section.path) == ("Training", "training")
    page = TestClient(Starlette(routes=[Mount(f"/ui/{section.path}", section.app)])).get(
        "/ui/training/"
    )
    assert page.status_code == 200 and "exp1/toy" in page.text


def test_the_list_shows_runs_and_evaluations_with_their_latest_step(runs: Path) -> None:
    page = client([runs]).get(f"{PREFIX}/")
    assert page.status_code == 200
    assert f'href="{PREFIX}/run/runs/exp1/toy"' in page.text
    assert f'href="{PREFIX}/eval/runs/exp1/eval-toy"' in page.text
    assert '<link rel="stylesheet" href="/ui/static/console.css">' in page.text
    row = re.search(r"<tr>\s*<td><a [^>]*>runs/exp1/toy</a>.*?</tr>", page.text, flags=re.S)
    assert row is not None
    assert "<td>5</td>" in row.group(0) and "toy-v2" in row.group(0)  # 5 steps, (5-1)//2


def test_a_run_page_charts_every_step_and_lists_kept_versions(runs: Path) -> None:
    page = client([runs]).get(f"{PREFIX}/run/runs/exp1/toy")
    assert page.status_code == 200
    for series in ("reward_mean", "success_rate", "hack_rate", "tool_calls_mean", "groups"):
        assert points(page.text, series) == 5, series
    for series in ("samples", "dropped_stale", "dropped_oversize", "version"):
        assert points(page.text, series) == 5, series
    assert "reward, step 5: 0.500" in page.text
    assert re.search(r"<td>toy-v2</td><td>4</td>", page.text)
    assert f'href="{PREFIX}/eval/runs/exp1/eval-toy"' in page.text
    assert f'src="{PREFIX}/assets/live.js"' in page.text
    assert client([runs]).get(f"{PREFIX}/assets/live.js").text.count("EventSource") >= 1


def test_a_malformed_line_is_reported_and_a_truncated_last_line_skipped(runs: Path) -> None:
    log = runs / "exp1" / "metrics-toy.jsonl"
    with log.open("a") as handle:
        handle.write('{"step": "six"}\n')
        handle.write('{"step": 7, "harn')  # being written
    page = client([runs]).get(f"{PREFIX}/run/runs/exp1/toy")
    assert page.status_code == 200
    assert "1 malformed line(s)" in page.text
    assert "metrics-toy.jsonl:6: " in page.text and "must be an integer" in page.text
    assert ":7:" not in page.text
    assert points(page.text, "reward_mean") == 5


def test_unknown_runs_and_evaluations_are_404_pages(runs: Path) -> None:
    console = client([runs])
    for path in ("run/runs/exp1/nope", "eval/nope", "run/../../etc/passwd", "events/x/y"):
        answer = console.get(f"{PREFIX}/{path}")
        assert answer.status_code == 404, path
    page = console.get(f"{PREFIX}/run/runs/exp1/nope")
    assert "No training run &#39;runs/exp1/nope&#39;" in page.text


def test_an_empty_or_missing_directory_lists_nothing(tmp_path: Path) -> None:
    page = client([tmp_path / "absent", tmp_path]).get(f"{PREFIX}/")
    assert page.status_code == 200
    assert "No training run found" in page.text and "No evaluation found" in page.text


def test_a_run_without_steps_yet_has_a_page(tmp_path: Path) -> None:
    (tmp_path / "metrics-pi.jsonl").write_text("")
    page = client([tmp_path]).get(f"{PREFIX}/run/{tmp_path.name}/pi")
    assert page.status_code == 200 and "No step written yet" in page.text


def test_events_follow_lines_appended_after_the_page(runs: Path) -> None:
    console = client([runs], poll_seconds=0.05, stream_seconds=1.5)
    page = console.get(f"{PREFIX}/run/runs/exp1/toy")
    stream = re.search(r'data-events="([^"]+)"', page.text)
    assert stream is not None and stream.group(1).startswith(f"{PREFIX}/events/runs/exp1/toy?")
    log = runs / "exp1" / "metrics-toy.jsonl"

    def write_later() -> None:
        time.sleep(0.4)
        write_steps(runs / "exp1", [6])
        with log.open("a") as handle:
            handle.write("not json\n")

    writer = threading.Thread(target=write_later)
    writer.start()
    body = console.get(stream.group(1).replace("&amp;", "&")).text
    writer.join()
    received = events(body)
    steps = [json.loads(e["data"]) for e in received if e["event"] == "step"]
    assert [step["step"] for step in steps] == [6]  # the five on the page are not sent again
    assert any(e["event"] == "skipped" and "not JSON" in e["data"] for e in received)
    charts = [e for e in received if e["event"] == "charts"]
    assert charts and points(charts[-1]["data"], "reward_mean") == 6
    assert charts[-1]["id"] == f"{log.stat().st_size}:7"


def test_a_reconnecting_browser_resumes_after_its_last_event(runs: Path) -> None:
    console = client([runs], poll_seconds=0.05, stream_seconds=0.2)
    log = runs / "exp1" / "metrics-toy.jsonl"
    size = log.stat().st_size
    write_steps(runs / "exp1", [6, 7])
    answer = console.get(
        f"{PREFIX}/events/runs/exp1/toy?after=0:0", headers={"Last-Event-ID": f"{size}:5"}
    )
    assert answer.headers["content-type"].startswith("text/event-stream")
    steps = [json.loads(e["data"])["step"] for e in events(answer.text) if e["event"] == "step"]
    assert steps == [6, 7]


def test_a_log_replaced_under_the_stream_resets_the_page(runs: Path) -> None:
    console = client([runs], poll_seconds=0.05, stream_seconds=0.5)
    log = runs / "exp1" / "metrics-toy.jsonl"
    answer = console.get(f"{PREFIX}/events/runs/exp1/toy?after={log.stat().st_size + 10}:9")
    assert [e["event"] for e in events(answer.text)] == ["reset"]


@pytest.mark.parametrize("position", ["x", "12", "-1:2", "1:2:3", "1.5:2", "²:1", f"{10**30}:1"])
def test_a_bad_stream_position_is_a_400(runs: Path, position: str) -> None:
    answer = client([runs]).get(f"{PREFIX}/events/runs/exp1/toy", params={"after": position})
    assert answer.status_code == 400 and "expected OFFSET:LINE" in answer.text


def test_the_evaluation_page_compares_checkpoints(runs: Path) -> None:
    page = client([runs]).get(f"{PREFIX}/eval/runs/exp1/eval-toy")
    assert page.status_code == 200
    rows = re.findall(r'<tr data-checkpoint="([^"]+)">(.*?)</tr>', page.text, flags=re.S)
    assert [name for name, _ in rows] == ["base", "toy-v2"]
    cells = [re.findall(r"<td>(.*?)</td>", row) for _, row in rows]
    # pass@1, mean@2, tool calls, hack rate
    assert cells[0][3:7] == ["0.00", "0.25", "8.0", "0.50"]
    assert cells[1][3:7] == ["1.00", "0.75", "3.5", "0.00"]
    assert cells[1][1] == "4"  # the step whose weights toy-v2 holds
    for chart in ("accuracy", "tool-calls", "hack-rate", "tokens", "seconds"):
        assert f'data-chart="{chart}"' in page.text
    assert page.text.count('data-series="pass_at_1"') == 2
    assert f'Checkpoints of the training run <a href="{PREFIX}/run/runs/exp1/toy">' in page.text
    hacks = re.findall(r'data-series="hack_rate"[^>]* height="([^"]+)"', page.text)
    assert len(hacks) == 2 and float(hacks[0]) > 0 and float(hacks[1]) == 0


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        ("{not json", "not JSON"),
        ('{"harness": "toy", "rollouts": 2, "tasks": []}', "checkpoints: Field required"),
        (
            '{"harness": "toy", "rollouts": "many", "tasks": [], "checkpoints": []}',
            "rollouts: Input should be a valid integer",
        ),
    ],
)
def test_an_unreadable_eval_report_is_explained(runs: Path, content: str, reason: str) -> None:
    (runs / "exp1" / "eval-toy" / "eval.json").write_text(content)
    page = client([runs]).get(f"{PREFIX}/eval/runs/exp1/eval-toy")
    assert page.status_code == 200
    assert "Cannot read this evaluation's report" in page.text and reason in page.text


def test_a_malformed_kept_version_is_named_and_the_others_shown(runs: Path) -> None:
    keep_version(runs / "exp1", 4, step=8)
    (runs / "exp1" / "toy" / "v4" / "version.json").write_text('{"step": "eight"}')
    page = client([runs]).get(f"{PREFIX}/run/runs/exp1/toy")
    assert page.status_code == 200
    assert "v4/version.json: step: Input should be a valid integer" in page.text
    assert "<td>toy-v2</td>" in page.text
    odd = runs / "exp1" / "toy" / "v\u00b2"  # a digit, to str.isdigit, that int() refuses
    odd.mkdir()
    (odd / "version.json").write_text("{}")
    again = client([runs]).get(f"{PREFIX}/run/runs/exp1/toy")
    assert again.status_code == 200 and "<td>toy-v2</td>" in again.text


def test_two_roots_with_the_same_name_get_distinct_keys(tmp_path: Path) -> None:
    first, second = tmp_path / "a" / "out", tmp_path / "b" / "out"
    write_steps(first, [1])
    write_steps(second, [1, 2])
    page = client([first, second]).get(f"{PREFIX}/")
    assert "out/toy" in page.text and "out~2/toy" in page.text
    other = client([first, second]).get(f"{PREFIX}/run/out~2/toy")
    assert points(other.text, "reward_mean") == 2


def test_an_open_run_stream_ends_when_the_console_stops(runs: Path, tmp_path: Path) -> None:
    """The section served as ``safeagents ui`` serves it: a run's page left open does not
    hold the server's shutdown, and its stream ends cleanly."""
    config = ProxyConfig(upstream="http://127.0.0.1/")
    app = standalone_app(
        SQLiteStore(tmp_path / "safeagents.db"),
        Firewall.load(),
        Credentials(config),
        sections=safeagents_console_sections([runs]),
    )
    server = ThreadedServer(app, "127.0.0.1", 0).start()
    try:
        with httpx.stream(
            "GET", f"{server.url}{PREFIX}/events/runs/exp1/toy", timeout=10
        ) as response:
            chunks = response.iter_raw()
            assert next(chunks).startswith(b"retry:")
            started = time.monotonic()
            server.stop()
            stopped = time.monotonic() - started
            b"".join(chunks)  # ended, not broken off
    finally:
        server.stop()
    assert stopped < 1.0, f"the console took {stopped:.2f} s to stop with a run page open"
