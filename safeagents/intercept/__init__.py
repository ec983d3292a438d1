"""``safeagents intercept``: the rules of ``safeagents serve`` as a mitmproxy addon.

For harnesses that can only be pointed at an HTTPS forward proxy: requests to model APIs
(``/v1/chat/completions``, ``/v1/responses``, ``/v1/messages`` on any host) are checked
with the same engine, enforcement and SQLite store as the proxy; everything else passes.
Needs mitmproxy (``pip install 'safeagents[intercept]'``).
"""

from __future__ import annotations

from safeagents.intercept._addon import INTERCEPT_UPSTREAM, InterceptAddon, intercept_config
from safeagents.intercept._run import InterceptSettings, run_intercept

__all__ = [
    "INTERCEPT_UPSTREAM",
    "InterceptAddon",
    "InterceptSettings",
    "intercept_config",
    "run_intercept",
]
