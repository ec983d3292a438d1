"""Token capture (``--capture-tokens``): ask vLLM for token ids and logprobs, read, strip."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ._common import JSONObject, as_dict, as_list

__all__ = [
    "TOKENS_KEY",
    "TokenCapture",
    "chat_extract_tokens",
    "chat_request_tokens",
    "chat_strip_tokens",
    "envelope_extract_tokens",
    "envelope_strip_tokens",
    "envelope_tokens",
]

TOKENS_KEY = "safeagents_tokens"
"""Where a response translated from Chat Completions (see ``_bridge``) carries the engine's
token ids and logprobs; never sent to the harness."""


@dataclass(frozen=True, slots=True)
class TokenCapture:
    """The engine's own token ids and per-token logprobs for one turn (never re-tokenised)."""

    prompt_token_ids: tuple[int, ...]
    completion_token_ids: tuple[int, ...]
    logprobs: tuple[float, ...]


def chat_request_tokens(body: Mapping[str, Any]) -> JSONObject:
    """``body`` asking vLLM chat completions for prompt/completion token ids and logprobs."""
    request = dict(body)
    request["return_token_ids"] = True
    request["logprobs"] = True
    if request.get("stream"):
        options = dict(as_dict(request.get("stream_options")))
        options["include_usage"] = True
        request["stream_options"] = options
    return request


def chat_extract_tokens(response: Mapping[str, Any]) -> TokenCapture | None:
    """Token ids of the first choice, or ``None`` if the server did not return them."""
    prompt = response.get("prompt_token_ids")
    choices = as_list(response.get("choices"))
    completion = as_dict(choices[0]).get("token_ids") if choices else None
    if not isinstance(prompt, list) or not isinstance(completion, list):
        return None
    entries = as_list(as_dict(as_dict(choices[0]).get("logprobs")).get("content"))
    logprobs = tuple(float(as_dict(entry).get("logprob", 0.0)) for entry in entries)
    return TokenCapture(
        prompt_token_ids=tuple(int(token) for token in prompt),
        completion_token_ids=tuple(int(token) for token in completion),
        logprobs=logprobs,
    )


def chat_strip_tokens(
    response: Mapping[str, Any], *, keep_logprobs: bool = False, keep_token_ids: bool = False
) -> JSONObject:
    """A deep copy of a chat response or chunk without token fields the client did not ask for."""
    stripped = copy.deepcopy(dict(response))
    if not keep_token_ids:
        stripped.pop("prompt_token_ids", None)
    for choice in as_list(stripped.get("choices")):
        if not isinstance(choice, dict):
            continue
        if not keep_token_ids:
            choice.pop("token_ids", None)
        if not keep_logprobs and "logprobs" in choice:
            choice["logprobs"] = None
    return stripped


def envelope_tokens(chat_response: Mapping[str, Any]) -> JSONObject | None:
    """The token fields of a chat response as the envelope a translated response carries."""
    captured = chat_extract_tokens(chat_response)
    if captured is None:
        return None
    return {
        "prompt_token_ids": list(captured.prompt_token_ids),
        "completion_token_ids": list(captured.completion_token_ids),
        "logprobs": list(captured.logprobs),
    }


def envelope_extract_tokens(response: Mapping[str, Any]) -> TokenCapture | None:
    """The engine's tokens in a translated response's envelope, if it has one."""
    envelope = as_dict(response.get(TOKENS_KEY))
    prompt = envelope.get("prompt_token_ids")
    completion = envelope.get("completion_token_ids")
    if not isinstance(prompt, list) or not isinstance(completion, list):
        return None
    return TokenCapture(
        prompt_token_ids=tuple(int(token) for token in prompt),
        completion_token_ids=tuple(int(token) for token in completion),
        logprobs=tuple(float(value) for value in as_list(envelope.get("logprobs"))),
    )


def envelope_strip_tokens(response: Mapping[str, Any]) -> JSONObject:
    """A deep copy of a translated response without its token envelope."""
    stripped = copy.deepcopy(dict(response))
    stripped.pop(TOKENS_KEY, None)
    return stripped
