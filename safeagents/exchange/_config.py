"""How one proxy is configured (the ``safeagents serve`` flags), serialisable for workers."""

from __future__ import annotations

import ipaddress
import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields
from typing import Any, Literal

from safeagents.exchange._redact import redact_url

__all__ = [
    "DEFAULT_BODY_LIMIT",
    "DEFAULT_RESPONSE_LIMIT",
    "Mode",
    "ProxyConfig",
    "Strategy",
    "is_loopback",
]

Mode = Literal["enforce", "monitor"]
Strategy = Literal["reask", "rewrite", "stop"]
DEFAULT_BODY_LIMIT = 32 * 1024 * 1024
DEFAULT_RESPONSE_LIMIT = 32 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class ProxyConfig:
    """Everything ``safeagents serve`` was told; ``rules`` empty means the bundled packs."""

    upstream: str
    rules: tuple[str, ...] = ()
    exclude_rules: tuple[str, ...] = ()
    """Ids of rules left out (``--exclude-rule``)."""
    vars: Mapping[str, str] = field(default_factory=dict)
    host: str = "127.0.0.1"
    port: int = 8787
    store: str = "safeagents.db"
    mode: Mode = "enforce"
    strategy: Strategy = "reask"
    max_reasks: int = 3
    capture_tokens: bool = False
    chat_upstream: bool = False
    """Send Responses and Messages requests upstream as Chat Completions (and translate the
    answers back). Always so when capturing tokens: vLLM returns them only on chat."""
    admin_token: str | None = field(default=None, repr=False)
    client_token: str | None = field(default=None, repr=False)
    """What harnesses present on model endpoints (their API key) when it is not the admin
    token; either token makes model endpoints require one (docs/security.md)."""
    session_secret: str | None = field(default=None, repr=False)
    """Signs the session keys the proxy issues; default: derived from the admin (else the
    client) token, so every worker and every restart with that token agrees."""
    upstream_api_key: str | None = field(default=None, repr=False)
    """The upstream's own credential, sent in the slot the harness used for its key."""
    cwd: str = "/workspace"
    body_limit: int = DEFAULT_BODY_LIMIT
    response_limit: int = DEFAULT_RESPONSE_LIMIT
    """The most bytes of one upstream answer (decoded) the proxy reads; past it the harness
    gets a 502 (a stream ends with an error event)."""
    timeout: float = 600.0
    connect_timeout: float = 10.0
    model_aliases: Mapping[str, str] = field(default_factory=dict)
    """Harness -> model the upstream is asked for instead (start-up state; the admin API
    changes it while the proxy runs)."""
    console_runs: tuple[str, ...] = ()
    """Directories of training runs and evaluations for the web console's add-on sections
    (``--runs``)."""

    def __post_init__(self) -> None:
        if self.mode not in ("enforce", "monitor"):
            raise ValueError(f"mode must be enforce or monitor, got {self.mode!r}")
        if self.strategy not in ("reask", "rewrite", "stop"):
            raise ValueError(f"strategy must be reask, rewrite or stop, got {self.strategy!r}")
        if self.max_reasks < 0:
            raise ValueError("max_reasks must be >= 0")
        if self.body_limit <= 0:
            raise ValueError("body_limit must be positive")
        for name in ("admin_token", "client_token", "session_secret", "upstream_api_key"):
            value = getattr(self, name)
            if value and (value != value.strip() or not value.isprintable()):
                raise ValueError(f"{name} must be printable, without surrounding spaces")
        if self.response_limit <= 0:
            raise ValueError("response_limit must be positive")
        if not self.upstream.startswith(("http://", "https://")):
            raise ValueError(f"upstream must be an http(s) URL, got {redact_url(self.upstream)!r}")
        for harness, model in self.model_aliases.items():
            if not harness.strip() or not model.strip():
                raise ValueError(
                    f"a model alias needs a harness and a model, got {harness!r}={model!r}"
                )

    def __repr__(self) -> str:
        """No secret, and the upstream without its credentials."""
        shown = {f.name: getattr(self, f.name) for f in fields(self) if f.repr}
        shown["upstream"] = redact_url(self.upstream)
        return f"ProxyConfig({', '.join(f'{name}={value!r}' for name, value in shown.items())})"

    @property
    def needs_admin_token(self) -> bool:
        """Bound beyond loopback: the admin API must not be open."""
        return not is_loopback(self.host)

    @property
    def translates(self) -> bool:
        """Harness dialects other than chat reach the upstream as Chat Completions."""
        return self.chat_upstream or self.capture_tokens

    @property
    def model_auth_required(self) -> bool:
        """A token is configured: model endpoints and pass-through need a credential."""
        return bool(self.admin_token or self.client_token)

    def to_json(self) -> str:
        data = asdict(self)
        data["vars"] = dict(self.vars)
        data["rules"] = list(self.rules)
        data["exclude_rules"] = list(self.exclude_rules)
        data["console_runs"] = list(self.console_runs)
        data["model_aliases"] = dict(self.model_aliases)
        return json.dumps(data)

    @classmethod
    def from_json(cls, text: str) -> ProxyConfig:
        data: dict[str, Any] = json.loads(text)
        data["rules"] = tuple(data.get("rules") or ())
        data["exclude_rules"] = tuple(data.get("exclude_rules") or ())
        data["console_runs"] = tuple(data.get("console_runs") or ())
        return cls(**data)


def is_loopback(host: str) -> bool:
    """``localhost`` or a loopback address; ``0.0.0.0``, ``::`` and names are not."""
    name = host.strip().strip("[]")
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False
