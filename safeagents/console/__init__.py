"""The web console: sessions (live), transcripts, rules and model aliases, in a browser.

The proxy serves it at ``/ui`` (:data:`CONSOLE_PREFIX`) with the admin API's access rules;
``safeagents ui --store PATH`` serves it for a store on its own. Pages are rendered on the
server (Jinja2) with one small script of our own for the live list: no build step, no CDN.
"""

from __future__ import annotations

from safeagents.console._app import CONSOLE_PREFIX, create_console
from safeagents.console._context import ConsoleSource, SourceGetter
from safeagents.console._filters import PAGE_SIZE, FilterError, ListRequest, parse_list
from safeagents.console._sections import plugin_sections
from safeagents.console._standalone import standalone_app

__all__ = [
    "CONSOLE_PREFIX",
    "PAGE_SIZE",
    "ConsoleSource",
    "FilterError",
    "ListRequest",
    "SourceGetter",
    "create_console",
    "parse_list",
    "plugin_sections",
    "standalone_app",
]
