"""The console in a real browser (the system's headless Chromium, driven by Playwright): the
list follows a session as it runs, a hacked transcript shows what was blocked and why, the
rule filter works. Screenshots of the pages go to ``$SAFEAGENTS_ARTIFACTS/console`` (CI keeps
that directory), else to the test's temporary directory."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from console_testkit import BLOCKED, HACKED_SCRIPT, RULE, artifacts, run_session
from playwright.sync_api import Browser, Page, sync_playwright

from safeagents.proxy import ProxyServer
from safeagents.scripted import ScriptedServer

CHROMIUM = os.environ.get("SAFEAGENTS_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
if not Path(CHROMIUM).is_file():
    missing = f"no Chromium at {CHROMIUM} (apt-get install chromium)"
    if os.environ.get("SAFEAGENTS_REQUIRE_BROWSER") == "1":
        raise RuntimeError(missing)  # scripts/test found one: this must not pass silently
    pytestmark = pytest.mark.skip(reason=missing)


@pytest.fixture(scope="module")
def store_location(tmp_path_factory: pytest.TempPathFactory) -> str:
    """SQLite only: what the browser sees is the same page on either backend
    (test_console_pages.py runs those on both)."""
    return str(tmp_path_factory.mktemp("browser") / "safeagents.db")


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with sync_playwright() as driver:
        launched = driver.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=["--no-sandbox"]
        )
        yield launched
        launched.close()


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 1360, "height": 900})
    opened = context.new_page()
    yield opened
    context.close()


def test_a_session_appears_in_the_open_list_without_a_reload(
    proxy: ProxyServer, scripted: ScriptedServer, page: Page, sid: str, tmp_path: Path
) -> None:
    page.goto(f"{proxy.url}/ui/")
    page.wait_for_selector("#live-status:text('live')")
    before = page.text_content('[data-total="sessions"]')
    page.evaluate("window.notReloaded = true")

    run_session(proxy, scripted, sid, HACKED_SCRIPT)

    row = page.wait_for_selector(f"#session-{sid}", timeout=15_000)
    assert "HACKED" in row.text_content() and RULE in row.text_content()
    assert page.evaluate("window.notReloaded") is True
    page.wait_for_function(
        "n => document.querySelector('[data-total=\"sessions\"]').textContent != n", arg=before
    )
    page.screenshot(path=str(artifacts(tmp_path) / "sessions.png"), full_page=True)


def test_a_hacked_transcript_shows_the_blocked_call_rule_and_rejection(
    proxy: ProxyServer, scripted: ScriptedServer, page: Page, sid: str, tmp_path: Path
) -> None:
    run_session(proxy, scripted, sid, HACKED_SCRIPT)
    page.goto(f"{proxy.url}/ui/")
    page.click(f"#session-{sid} a")
    page.wait_for_selector(".transcript")
    blocked = page.locator(".call.blocked").first
    assert BLOCKED in blocked.locator("pre.command").text_content()
    assert blocked.locator("a.rule").text_content() == RULE
    rejection = blocked.locator(".rejection-text").text_content()
    assert rejection.startswith(f"Blocked by safeagents ({RULE})")
    assert blocked.locator(".severity").text_content() == "critical"
    assert page.locator(".turn.reask").count() >= 1
    page.screenshot(path=str(artifacts(tmp_path) / "transcript.png"), full_page=True)

    blocked.locator("a.rule").click()
    page.wait_for_selector("text=Message the model reads")
    assert page.url.endswith(f"/ui/rules/{RULE}")
    page.screenshot(path=str(artifacts(tmp_path) / "rule.png"), full_page=True)


def test_filtering_by_rule(
    proxy: ProxyServer, scripted: ScriptedServer, page: Page, sid: str, tmp_path: Path
) -> None:
    run_session(proxy, scripted, sid, HACKED_SCRIPT)
    clean = sid + "-clean"
    run_session(proxy, scripted, clean, [{"shell": "ls"}, "Nothing to do."])
    page.goto(f"{proxy.url}/ui/")
    assert page.locator(f"#session-{clean}").count() == 1
    page.select_option("select[name=rule]", RULE)
    page.click("button[type=submit]")
    page.wait_for_url(f"**rule={RULE}**")
    assert page.locator(f"#session-{sid}").count() == 1
    assert page.locator(f"#session-{clean}").count() == 0
    rows = page.locator("#session-rows tr")
    assert all(RULE in rows.nth(i).text_content() for i in range(rows.count()))
    page.goto(f"{proxy.url}/ui/rules")
    page.screenshot(path=str(artifacts(tmp_path) / "rules.png"), full_page=True)
