"""A toy environment with a programmatic verifier, for proving the loop end to end.

The agent is one chat completion through the proxy (as session ``endpoint.session_id``); the
verifier rewards the share of answer words that are target words. A tiny model learns to say
them within a few dozen steps, which makes the reward curve a check of the whole loop.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import httpx

from trainer._environment import Endpoint, Task

__all__ = ["ToyEnvironment", "target_share"]

DEFAULT_TARGETS: tuple[str, ...] = (
    *("red", "orange", "yellow", "green", "blue", "purple"),
    *("black", "white", "gray", "brown", "pink"),
)
BASH_TOOL = {
    "type": "function",
    "function": {
        "name": "bash",
        "description": "Run a shell command.",
        "parameters": {
            "type": "object",
            "properties": {"command": {"type": "string"}},
            "required": ["command"],
        },
    },
}
"""Offered like a coding agent offers its shell: a tool-less request is a side call (a title,
a summary) to the proxy, and side calls are not trained."""
_SPACE = re.compile(r"\s+")


def target_share(text: str, targets: Sequence[str]) -> float:
    """The share of ``text``'s non-space characters that spell target words (0 for none).

    Words are matched anywhere, since a tiny model's words often run together.
    """
    wanted = "|".join(re.escape(word) for word in sorted(set(targets), key=len, reverse=True))
    solid = _SPACE.sub("", text)
    if not solid or not wanted:
        return 0.0
    covered = sum(len(match) for match in re.findall(wanted, solid))
    return covered / len(solid)


class ToyEnvironment:
    """Tasks ``say colours`` ×N; reward is the share of target words in the answer."""

    def __init__(
        self,
        *,
        harness: str = "generic",
        targets: Sequence[str] = DEFAULT_TARGETS,
        tasks: int = 2,
        success_at: float = 0.5,
        timeout: float = 120.0,
        dialect: str = "chat",
    ) -> None:
        if not targets:
            raise ValueError("the toy environment needs at least one target word")
        if dialect not in _ASK:
            raise ValueError(f"unknown dialect {dialect!r}; known: {', '.join(_ASK)}")
        self.dialect = dialect
        self.harness = harness
        self.targets = tuple(targets)
        self.success_at = success_at
        self.timeout = timeout
        self._tasks = [
            Task(id=f"toy-{index}", prompt=f"name colours {index}") for index in range(tasks)
        ]

    def tasks(self) -> Sequence[Task]:
        return self._tasks

    async def rollout(self, task: Task, endpoint: Endpoint) -> Mapping[str, Any]:
        """One request in the environment's dialect (``chat``, ``responses`` as codex
        speaks, ``messages`` as claude-code speaks); the answer's text is scored."""
        path, body, read = _ASK[self.dialect](task.prompt, endpoint)
        async with httpx.AsyncClient(timeout=self.timeout) as client:
            response = await client.post(
                f"{endpoint.base_url}/{path}", json=body, headers=endpoint.headers
            )
        response.raise_for_status()
        share = target_share(read(response.json()), self.targets)
        return {"success": share >= self.success_at, "reward": share}


Ask = Callable[[str, Endpoint], tuple[str, dict[str, Any], Callable[[Any], str]]]


def _chat(prompt: str, endpoint: Endpoint) -> tuple[str, dict[str, Any], Callable[[Any], str]]:
    body = {
        "model": endpoint.model,
        "messages": [{"role": "user", "content": prompt}],
        "tools": [BASH_TOOL],
        "temperature": endpoint.temperature,
        "max_tokens": endpoint.max_tokens,
    }
    return (
        "chat/completions",
        body,
        lambda answer: answer["choices"][0]["message"].get("content") or "",
    )


def _responses(prompt: str, endpoint: Endpoint) -> tuple[str, dict[str, Any], Callable[[Any], str]]:
    function: Any = BASH_TOOL["function"]
    body = {
        "model": endpoint.model,
        "input": [
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": prompt}]}
        ],
        "tools": [{"type": "function", **function}],
        "max_output_tokens": endpoint.max_tokens,
    }

    def read(answer: Any) -> str:
        return "".join(
            part.get("text", "")
            for item in answer["output"]
            if item.get("type") == "message"
            for part in item["content"]
        )

    return "responses", body, read


def _messages(prompt: str, endpoint: Endpoint) -> tuple[str, dict[str, Any], Callable[[Any], str]]:
    function: Any = BASH_TOOL["function"]
    body = {
        "model": endpoint.model,
        "max_tokens": endpoint.max_tokens,
        "messages": [{"role": "user", "content": prompt}],
        "tools": [
            {
                "name": function["name"],
                "description": function["description"],
                "input_schema": function["parameters"],
            }
        ],
    }

    def read(answer: Any) -> str:
        return "".join(b.get("text", "") for b in answer["content"] if b["type"] == "text")

    return "messages", body, read


_ASK: dict[str, Ask] = {"chat": _chat, "responses": _responses, "messages": _messages}
