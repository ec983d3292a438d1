"""A run's page in headless Chromium: its charts are drawn from the metrics log and grow
while the run appends to it; the evaluation page draws a bar per checkpoint. Screenshots
go to the test's temporary directory (``SAFEAGENTS_SCREENSHOTS`` names another)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from console_kit import keep_version, write_eval, write_steps
from starlette.applications import Starlette
from starlette.routing import Mount

from safeagents._thread_server import ThreadedServer
from trainer._console import training_app

CHROMIUM = os.environ.get("SAFEAGENTS_CHROMIUM", "/usr/bin/chromium")

pytestmark = pytest.mark.skipif(
    shutil.which(CHROMIUM) is None, reason=f"no Chromium at {CHROMIUM} (apt-get install chromium)"
)

playwright = pytest.importorskip("playwright.sync_api")


@pytest.fixture
def runs(tmp_path: Path) -> Path:
    out = tmp_path / "runs" / "exp1"
    write_steps(out, range(1, 9))
    keep_version(out, 2, step=4)
    write_eval(out)
    return tmp_path / "runs"


@pytest.fixture
def console(runs: Path) -> Iterator[str]:
    app = Starlette(routes=[Mount("/ui/training", training_app([runs], poll_seconds=0.1))])
    with ThreadedServer(app, "127.0.0.1", 0) as server:
        yield f"{server.url}/ui/training"


@pytest.fixture
def screenshots(tmp_path: Path) -> Path:
    folder = Path(os.environ.get("SAFEAGENTS_SCREENSHOTS", tmp_path / "screenshots"))
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@pytest.fixture
def page(console: str) -> Iterator[object]:
    with playwright.sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            yield browser.new_page(viewport={"width": 1280, "height": 1100})
        finally:
            browser.close()


def test_a_run_page_draws_its_metrics_and_follows_the_log(
    page: playwright.Page, console: str, runs: Path, screenshots: Path
) -> None:
    page.goto(f"{console}/run/runs/exp1/toy")
    reward = page.locator('[data-chart="reward"] [data-series="reward_mean"] circle')
    assert reward.count() == 8
    titles = [reward.nth(i).locator("title").text_content() for i in range(8)]
    assert titles[0] == "reward, step 1: 0.100" and titles[-1] == "reward, step 8: 0.800"
    heights = [float(reward.nth(i).get_attribute("cy") or "nan") for i in range(8)]
    assert heights == sorted(heights, reverse=True)  # a rising reward climbs the chart
    for chart in ("rates", "tool-calls", "batch", "dropped", "version"):
        assert page.locator(f'[data-chart="{chart}"] circle').count() >= 8, chart
    assert page.locator('[data-chart="reward"] svg').bounding_box() is not None
    page.screenshot(path=str(screenshots / "training-run.png"), full_page=True)

    write_steps(runs / "exp1", [9, 10])
    page.wait_for_function(
        "document.querySelectorAll('[data-chart=reward] circle').length === 10", timeout=10_000
    )
    assert page.locator('[data-field="step"]').text_content() == "10"


def test_the_evaluation_page_draws_a_bar_per_checkpoint(
    page: playwright.Page, console: str, screenshots: Path
) -> None:
    page.goto(f"{console}/eval/runs/exp1/eval-toy")
    bars = page.locator('[data-chart="accuracy"] rect.bar')
    assert bars.count() == 4  # pass@1 and mean, for base and toy-v2
    assert [bars.nth(i).locator("title").text_content() for i in (1, 3)] == [
        "toy-v2, pass@1: 1.00",
        "toy-v2, mean over 2: 0.75",
    ]
    assert page.locator("#checkpoints tbody tr").count() == 2
    page.screenshot(path=str(screenshots / "training-eval.png"), full_page=True)
