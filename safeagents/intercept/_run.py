"""``safeagents intercept``: mitmdump with the addon, run in this process."""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from mitmproxy.options import Options
from mitmproxy.tools.dump import DumpMaster

from safeagents._firewall import Firewall
from safeagents.exchange import Mode, Strategy
from safeagents.intercept._addon import InterceptAddon

__all__ = ["InterceptSettings", "run_intercept"]


@dataclass(frozen=True, slots=True)
class InterceptSettings:
    """Everything ``safeagents intercept`` was told; ``rules`` empty means the bundled packs."""

    rules: tuple[str, ...] = ()
    exclude_rules: tuple[str, ...] = ()
    vars: Mapping[str, str] = field(default_factory=dict)
    store: str = "safeagents.db"
    mode: Mode = "enforce"
    strategy: Strategy = "reask"
    max_reasks: int = 3
    cwd: str = "/workspace"
    listen_host: str = "127.0.0.1"
    listen_port: int = 8080
    confdir: str = "~/.mitmproxy"
    """mitmproxy's directory: its CA is ``mitmproxy-ca-cert.pem`` there."""
    ssl_insecure: bool = False
    """Do not verify the upstream's TLS certificate (the harness's requests and re-asks)."""
    log_level: str = "info"
    response_limit: int = 32
    """Largest model answer read, in MiB (``safeagents serve --response-limit``)."""

    def addon_options(self) -> dict[str, Any]:
        return {
            "safeagents_rules": list(self.rules),
            "safeagents_exclude_rules": list(self.exclude_rules),
            "safeagents_vars": [f"{key}={value}" for key, value in self.vars.items()],
            "safeagents_store": self.store,
            "safeagents_mode": self.mode,
            "safeagents_strategy": self.strategy,
            "safeagents_max_reasks": self.max_reasks,
            "safeagents_cwd": self.cwd,
            "safeagents_response_limit": self.response_limit,
        }


def run_intercept(settings: InterceptSettings, firewall: Firewall | None = None) -> None:
    """Serve as an HTTP(S) forward proxy until SIGINT or SIGTERM; ``firewall``, when given,
    is of ``settings``' rules."""
    asyncio.run(_serve(settings, firewall))


async def _serve(settings: InterceptSettings, firewall: Firewall | None) -> None:
    options = Options(
        listen_host=settings.listen_host,
        listen_port=settings.listen_port,
        confdir=settings.confdir,
        ssl_insecure=settings.ssl_insecure,
    )
    master = DumpMaster(options, with_termlog=True, with_dumper=False)
    options.update(termlog_verbosity=settings.log_level)
    master.addons.add(InterceptAddon(firewall))
    options.update(**settings.addon_options())
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, master.shutdown)
    await master.run()
