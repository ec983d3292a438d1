"""``safeagents intercept`` applies the model aliases in its store, like ``serve``."""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx
import pytest
from intercept_testkit import Intercept, StartIntercept
from proxy_testkit import PATHS, first_body, script

from safeagents.scripted import ScriptedServer
from safeagents.store import SQLiteStore


@pytest.fixture(scope="module")
def aliased(start_intercept: StartIntercept) -> Intercept:
    return start_intercept("--max-reasks", "2")  # a process of its own: others see no alias


def _change(store: Path, model: str | None) -> None:
    async def write() -> None:
        db = SQLiteStore(store)
        if model is None:
            await db.delete_alias("pi")
        else:
            await db.set_alias("pi", model)
        await db.close()

    asyncio.run(write())  # applies from the next request on: no wait


def test_the_upstream_is_asked_for_the_alias_and_the_original_without_one(
    sid: str, plain_upstream: ScriptedServer, aliased: Intercept
) -> None:
    plain_upstream.model.clear()
    plain_upstream.model.set_script(script("done", "done"))
    url = plain_upstream.base_url + PATHS["chat"]
    proxy = httpx.Client(proxy=aliased.proxy, timeout=30, trust_env=False)
    with proxy as client:
        _change(aliased.store, "pi-v7")
        assert client.post(url, json=first_body("chat"), headers={"x-session-id": sid}).is_success
        _change(aliased.store, None)
        assert client.post(url, json=first_body("chat"), headers={"x-session-id": sid}).is_success
    assert [r.body["model"] for r in plain_upstream.model.model_requests()] == ["pi-v7", "m"]
    turns = aliased.session(sid)["turns"]
    assert [(t["model"], t["requested_model"]) for t in turns] == [("pi-v7", "m"), ("m", "m")]
