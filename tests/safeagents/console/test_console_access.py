"""The console's access rules, as the admin API's: bound beyond loopback it needs the admin
token (header, or ``?token=`` once and then a cookie); a session key sees its own session only."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from console_testkit import run_session

from safeagents import Firewall
from safeagents.proxy import ProxyConfig, ProxyServer
from safeagents.scripted import ScriptedServer

TOKEN = "console-admin-token"
ADMIN = {"Authorization": f"Bearer {TOKEN}"}


@pytest.fixture(scope="module")
def guarded(
    scripted: ScriptedServer, firewall: Firewall, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ProxyServer]:
    store = tmp_path_factory.mktemp("guarded") / "safeagents.db"
    config = ProxyConfig(
        upstream=scripted.base_url, store=str(store), host="0.0.0.0", admin_token=TOKEN
    )
    server = ProxyServer(config, firewall=firewall, port=0).start()
    url = f"http://127.0.0.1:{server.port}"
    for sid in ("mine", "theirs"):
        key = httpx.get(f"{url}/safeagents/v1/sessions/{sid}/key", headers=ADMIN).json()["key"]
        run_session(server, scripted, sid, [{"shell": "ls"}, "done"], Authorization=f"Bearer {key}")
    yield server
    server.stop()


def _url(server: ProxyServer, path: str) -> str:
    return f"http://127.0.0.1:{server.port}{path}"


@pytest.mark.parametrize(
    "path", ["/ui/", "/ui/events", "/ui/sessions/mine", "/ui/rules", "/ui/aliases", "/ui/explain"]
)
def test_every_page_refuses_a_request_without_the_admin_token(
    guarded: ProxyServer, path: str
) -> None:
    response = httpx.get(_url(guarded, path))
    assert response.status_code == 401 and "admin token" in response.text
    wrong = httpx.get(_url(guarded, path), headers={"Authorization": "Bearer nope"})
    assert wrong.status_code == 401
    assert "mine" not in response.text.replace("/ui/?token", "")


def test_the_admin_token_opens_every_page(guarded: ProxyServer) -> None:
    page = httpx.get(_url(guarded, "/ui/"), headers=ADMIN)
    assert page.status_code == 200
    assert 'id="session-mine"' in page.text and 'id="session-theirs"' in page.text
    assert httpx.get(_url(guarded, "/ui/rules"), headers=ADMIN).status_code == 200


def test_a_token_in_the_address_becomes_a_cookie(guarded: ProxyServer) -> None:
    with httpx.Client() as browser:
        refused = browser.get(_url(guarded, "/ui/?token=wrong"))
        assert refused.status_code == 401 and not browser.cookies
        login = browser.get(_url(guarded, f"/ui/?hacked=no&token={TOKEN}"))
        assert login.status_code == 303 and login.headers["location"] == "/ui/?hacked=no"
        cookie = login.headers["set-cookie"].lower()
        assert "httponly" in cookie and "samesite=strict" in cookie and "path=/ui" in cookie
        page = browser.get(_url(guarded, "/ui/?hacked=no"))
        assert page.status_code == 200 and 'id="session-mine"' in page.text


def test_a_session_key_sees_only_its_own_session(guarded: ProxyServer) -> None:
    key = httpx.get(_url(guarded, "/safeagents/v1/sessions/mine/key"), headers=ADMIN).json()
    own = {"Authorization": f"Bearer {key['key']}"}
    listed = httpx.get(_url(guarded, "/ui/"), headers=own)
    assert listed.status_code == 200
    assert 'id="session-mine"' in listed.text and 'id="session-theirs"' not in listed.text
    assert httpx.get(_url(guarded, "/ui/sessions/mine"), headers=own).status_code == 200
    assert httpx.get(_url(guarded, "/ui/sessions/theirs"), headers=own).status_code == 403
    assert httpx.get(_url(guarded, "/ui/rules"), headers=own).status_code == 403
    forged = {"Authorization": "Bearer sa-theirs.0000000000000000000000000000000"}
    assert httpx.get(_url(guarded, "/ui/sessions/theirs"), headers=forged).status_code == 401


def test_on_loopback_without_a_token_a_session_key_still_confines(
    proxy: ProxyServer,
) -> None:
    assert httpx.get(f"{proxy.url}/ui/rules").status_code == 200  # open, as the admin API
    own = {"Authorization": "Bearer sa-someone"}
    assert httpx.get(f"{proxy.url}/ui/rules", headers=own).status_code == 403
