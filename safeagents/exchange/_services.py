"""The long-lived parts of a running proxy, built once per process."""

from __future__ import annotations

from dataclasses import dataclass

from safeagents._firewall import Firewall
from safeagents.exchange._aliases import ModelAliases
from safeagents.exchange._auth import Credentials
from safeagents.exchange._config import ProxyConfig
from safeagents.exchange._enforce import Enforcer
from safeagents.exchange._history import HistoryCache
from safeagents.exchange._metrics import Metrics
from safeagents.exchange._offload import CallChecks
from safeagents.exchange._recorder import Recorder
from safeagents.exchange._upstream import Upstream
from safeagents.rules import RuleSet
from safeagents.store import Store

__all__ = ["Services", "build_firewall"]


def build_firewall(config: ProxyConfig) -> Firewall:
    """Load and validate the configured rules (bundled packs when none are given)."""
    rules = RuleSet.load(
        list(config.rules) or None, vars=dict(config.vars), exclude=config.exclude_rules
    )
    return Firewall(rules)


@dataclass(slots=True)
class Services:
    config: ProxyConfig
    firewall: Firewall
    store: Store
    upstream: Upstream
    metrics: Metrics
    history: HistoryCache
    enforcer: Enforcer
    recorder: Recorder
    aliases: ModelAliases
    credentials: Credentials

    @classmethod
    def build(
        cls,
        config: ProxyConfig,
        firewall: Firewall,
        store: Store,
        upstream: Upstream | None = None,
    ) -> Services:
        upstream = upstream or Upstream(config)
        metrics = Metrics()
        checks = CallChecks(firewall)
        history = HistoryCache(
            firewall.registry,
            effects=checks.history_effects,
            said=lambda text, harness, context, state: firewall.remember_said(
                text, harness=harness, context=context, session=state
            ),
        )
        return cls(
            config=config,
            firewall=firewall,
            store=store,
            upstream=upstream,
            metrics=metrics,
            history=history,
            enforcer=Enforcer(config, firewall, upstream, history, checks),
            recorder=Recorder(config, store, metrics, firewall.registry.plugin_manager),
            aliases=ModelAliases(store),
            credentials=Credentials(config),
        )

    async def aclose(self) -> None:
        await self.recorder.drain()
        await self.upstream.aclose()
        await self.store.close()
        self.enforcer.checks.close()
