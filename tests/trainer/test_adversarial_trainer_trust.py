"""Rollouts through a proxy with an admin token (docs/security.md): each rollout's agent gets
its session's key from the proxy, since model endpoints then refuse callers without one."""

from __future__ import annotations

import asyncio
from pathlib import Path

from safeagents.proxy import ProxyConfig, ProxyServer
from safeagents.scripted import Script, ScriptedServer
from safeagents.store import SQLiteStore
from trainer import load_reward
from trainer._runner import ProxyAdmin, RolloutRunner
from trainer._toy import ToyEnvironment

TOKEN = "trainer-admin-t0ken"


def test_rollouts_reach_a_guarded_proxy_with_their_session_key(tmp_path: Path) -> None:
    store_path = tmp_path / "sa.db"

    async def collect(proxy_url: str) -> object:
        store = SQLiteStore(store_path)
        runner = RolloutRunner(
            ToyEnvironment(tasks=1),
            proxy_url=proxy_url,
            admin=ProxyAdmin(f"{proxy_url}/safeagents/v1", token=TOKEN),
            store=store,
            reward=load_reward(entry_points=False),
            group_size=2,
            model="m",
            temperature=1.0,
            max_tokens=16,
        )
        try:
            return await runner.collect(runner.environment.tasks())
        finally:
            await store.close()

    with ScriptedServer(Script.from_data(["red green"])) as model:
        config = ProxyConfig(upstream=model.base_url, store=str(store_path), admin_token=TOKEN)
        with ProxyServer(config, port=0) as proxy:
            step = asyncio.run(collect(proxy.url))
        sent = [
            request.headers.get("authorization", "") for request in model.model.model_requests()
        ]
    assert step.failed == 0 and len(step.rollouts) == 2  # type: ignore[attr-defined]
    assert len(sent) == 2 and not any("sa-" in value or TOKEN in value for value in sent)
