"""``safeagents serve --model-alias``: flag parsing, and aliases shared by ``--workers``."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from proxy_testkit import PATHS, first_body, script, serve_workers

import safeagents.proxy
from safeagents.cli import main
from safeagents.proxy import ProxyConfig
from safeagents.scripted import ScriptedServer

ALIASES = "/safeagents/v1/aliases"


@pytest.fixture
def served(monkeypatch: pytest.MonkeyPatch) -> list[ProxyConfig]:
    """The configs ``safeagents serve`` would have served (nothing is started)."""
    configs: list[ProxyConfig] = []
    monkeypatch.setattr(safeagents.proxy, "serve", lambda config, **_: configs.append(config))
    return configs


@pytest.mark.parametrize("value", ["pi", "=pi-v1", "pi=", " =x", "nobody=pi-v1"])
def test_a_malformed_or_unknown_alias_flag_is_a_usage_error(
    value: str, served: list[ProxyConfig], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["serve", "--upstream", "http://x", "--model-alias", value]) == 2
    assert "--model-alias" in capsys.readouterr().err and not served


def test_alias_flags_name_canonical_harnesses_and_survive_the_worker_hand_off(
    served: list[ProxyConfig],
) -> None:
    flags = ["--model-alias", "claude=cc-v1", "--model-alias", "pi=pi-v1"]
    flags += ["--model-alias", "pi=org/pi=v2"]
    assert main(["serve", "--upstream", "http://x", *flags]) == 0
    (config,) = served
    assert config.model_aliases == {"claude-code": "cc-v1", "pi": "org/pi=v2"}
    assert ProxyConfig.from_json(config.to_json()) == config
    with pytest.raises(ValueError, match="alias"):
        ProxyConfig(upstream="http://x", model_aliases={"pi": ""})


def _models(base: str, scripted: ScriptedServer, count: int) -> set[str]:
    """The models the upstream was asked for by ``count`` requests on fresh connections."""
    seen: set[str] = set()
    for index in range(count):
        with httpx.Client() as client:  # a new connection per request spreads them out
            url = f"{base}/s/a{index}/v1{PATHS['chat']}"
            assert client.post(url, json=first_body("chat")).status_code == 200
        seen.add(scripted.model.model_requests()[-1].body["model"])
    return seen


def test_two_workers_apply_an_alias_changed_through_either(
    tmp_path: Path, scripted: ScriptedServer
) -> None:
    scripted.model.set_script(script(*["done"] * 40))
    store, log = str(tmp_path / "workers.db"), tmp_path / "serve.log"
    with serve_workers(scripted.base_url, store, log, "--model-alias", "pi=pi-v1") as base:
        assert _models(base, scripted, 8) == {"pi-v1"}
        with httpx.Client() as client:
            assert client.put(f"{base}{ALIASES}/pi", json={"model": "pi-v2"}).status_code == 200
        assert _models(base, scripted, 8) == {"pi-v2"}
        with httpx.Client() as client:
            assert client.delete(f"{base}{ALIASES}/pi").status_code == 200
        assert _models(base, scripted, 8) == {"m"}
