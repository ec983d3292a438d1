"""Text mode: the harness runs the action a reply writes in its words (mini-swe-agent's one
fenced block), so there is no tool call to check or withhold. The proxy reads that action as
a call (id ``text-{position}``, the reply's place in the conversation), the user message after
it as its output, and withholds it by rewriting the reply's words. Chat Completions only: the
dialect mini-swe-agent speaks.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from safeagents._actions import ToolCall
from safeagents._harness import Harness
from safeagents._registry import FALLBACK_HARNESS, Registry
from safeagents.exchange._exchange import Exchange
from safeagents.protocols import ChatCompletions, Dialect, RequestInfo
from safeagents.store import HiddenEntry

__all__ = ["action_calls", "ending", "observed_items", "reply_calls", "rewritten", "text_harness"]

JSONObject = dict[str, Any]


def text_harness(
    registry: Registry, dialect: Dialect, info: RequestInfo, harness: str
) -> Harness | None:
    """The harness whose text mode reads the replies to a request: ``harness`` when it has
    one; for a request offering no tools from a harness not known (the fallback, or one no
    longer registered), the first registered harness that has one, since nothing tells that
    the client does not run what a reply says."""
    if not isinstance(dialect, ChatCompletions):
        return None
    plugin = registry.harnesses.get(harness)
    if plugin is not None and plugin.text_mode:
        return plugin
    if info.has_tools or (plugin is not None and harness != FALLBACK_HARNESS):
        return None
    return next((h for _, h in sorted(registry.harnesses.items()) if h.text_mode), None)


def action_calls(
    dialect: Dialect, message: Any, harness: Harness | None, position: int
) -> list[ToolCall]:
    """The text-mode calls of the assistant ``message`` at conversation ``position`` (for one
    that makes no tool calls)."""
    if harness is None or not isinstance(dialect, ChatCompletions):
        return []
    text = dialect.action_text(message)
    if not text:
        return []
    calls = harness.text_calls(text)
    base = f"text-{position}"
    return [
        replace(call, id=f"{base}.{index}" if index else base) for index, call in enumerate(calls)
    ]


def reply_calls(ex: Exchange, response: Mapping[str, Any]) -> list[ToolCall]:
    """The text-mode calls of ``response``, an answer without tool calls."""
    if ex.text_mode is None or ex.dialect.tool_calls(response):
        return []
    message = _reply(ex.dialect, response)
    return action_calls(ex.dialect, message, ex.text_mode, ex.info.message_count)


def rewritten(
    ex: Exchange, response: JSONObject, call_id: str, message: str
) -> tuple[JSONObject, HiddenEntry] | None:
    """``response`` with its text-mode action replaced by one showing ``message`` (see
    :meth:`Harness.text_rewrite`), and the entry that puts the original back in later
    requests; ``None`` if the harness cannot rewrite it."""
    dialect = _chat(ex)
    harness = ex.text_mode
    text = dialect.action_text(_reply(dialect, response))
    words = harness.text_rewrite(text, message) if harness is not None and text else None
    if words is None:
        return None
    delivered, original = dialect.rewrite_content(response, words)
    entry = HiddenEntry(dialect.name, "restore", ex.plan.at, ex.plan.anchor, (original,), call_id)
    return delivered, entry


def observed_items(ex: Exchange, response: JSONObject, message: str) -> list[JSONObject]:
    """The withheld reply and ``message`` as its observation: the hidden pair of a re-ask."""
    return _chat(ex).observed_items(response, message)


def ending(ex: Exchange, text: str) -> JSONObject:
    """The answer that ends the run saying ``text``: for a text-mode harness, a reply whose
    action ends it (a reply without one would be a format error, and the run would go on)."""
    words = ex.text_mode.text_stop(text) if ex.text_mode is not None else None
    return ex.dialect.text_response(ex.info, text if words is None else words)


def _chat(ex: Exchange) -> ChatCompletions:
    if not isinstance(ex.dialect, ChatCompletions):
        raise TypeError(f"text mode is read in Chat Completions, not {ex.dialect.name}")
    return ex.dialect


def _reply(dialect: Dialect, response: Mapping[str, Any]) -> JSONObject:
    """The answer's message, as the assistant's whatever role the upstream gave it (the
    harness reads its words all the same)."""
    messages = dialect.response_messages(response)
    return {**messages[0], "role": "assistant"} if messages else {}
