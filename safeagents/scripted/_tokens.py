"""vLLM-style token fields (``return_token_ids``, ``logprobs``) for the scripted chat model.

The ids are deterministic stand-ins (code points of the prompt and of the answer), so a
proxy's token capture can be checked end to end.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from safeagents.scripted._dialect import Body, arguments_json
from safeagents.scripted._render import Turn

__all__ = ["completion_token_ids", "logprobs", "prompt_token_ids", "wants_ids", "wants_logprobs"]

_MAX_TOKENS = 64


def wants_ids(body: Body) -> bool:
    return body.get("return_token_ids") is True


def wants_logprobs(body: Body) -> bool:
    return body.get("logprobs") is True


def prompt_token_ids(body: Body) -> list[int]:
    text = json.dumps(body.get("messages", []), separators=(",", ":"))
    return [ord(char) for char in text[:_MAX_TOKENS]]


def completion_token_ids(turn: Turn) -> list[int]:
    text = (turn.text or "") + "".join(arguments_json(call) for call in turn.calls)
    return [ord(char) for char in text[:_MAX_TOKENS]] or [0]


def logprobs(turn: Turn) -> dict[str, Any]:
    entries: list[dict[str, Any]] = [
        {"token": chr(token), "logprob": -0.01 * (index + 1), "bytes": None, "top_logprobs": []}
        for index, token in enumerate(completion_token_ids(turn))
    ]
    return {"content": entries}


def add_token_fields(response: dict[str, Any], turn: Turn, body: Mapping[str, Any]) -> None:
    """Add what a vLLM chat completion returns when the request asked for token ids/logprobs."""
    choice = response["choices"][0]
    if wants_ids(body):
        response["prompt_token_ids"] = prompt_token_ids(body)
        choice["token_ids"] = completion_token_ids(turn)
    if wants_logprobs(body):
        choice["logprobs"] = logprobs(turn)
