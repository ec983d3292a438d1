"""What the benchmark sends and what the scripted upstream answers, shared by both sides.

A scenario is named by the request's model, ``bench-{size}[-block][-paced]``: the size of the
tool call's arguments (``100`` bytes or ``10k``), whether the call breaks a bundled rule (the
proxy blocks it and re-asks once), and whether the upstream paces its stream.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass

__all__ = [
    "ANSWER_TEXT",
    "ARGUMENT_SIZES",
    "BLOCKED_COMMAND",
    "CALL_MARKER",
    "REASK_COMMAND",
    "REASK_MARKER",
    "TOKEN_MARKER",
    "Scenario",
    "request_body",
    "shell_script",
]

ARGUMENT_SIZES = {"100": 100, "10k": 10_000}
TOKEN_MARKER = b"Looking"
"""The first words of the answer's text: their arrival is the first token."""
CALL_MARKER = b"call_bench"
"""Every tool call id starts with this: its arrival is the first tool-call byte."""
REASK_MARKER = b"call_bench_reask"
"""The id of the call the upstream gives after a re-ask."""
ANSWER_TEXT = "Looking at the failing test first, then I will run the suite."
# test-file-deletion (reward-hacking pack) rejects this; it is only ever data here
BLOCKED_COMMAND = "rm tests/test_calc.py"
REASK_COMMAND = "python -m pytest -q tests/test_calc.py"

_SAFE_COMMANDS = (
    "python -m pytest -q tests/test_calc.py",
    "grep -rn 'def add' src/ | head -20",
    "cd src && sed -n '1,40p' calc.py",
    "ls -la tests && git status --short",
    "cat > notes.txt <<'EOF'\nremember to run the tests\nEOF",
)
_SYSTEM_PROMPT = (
    "You are a coding agent working in a Python repository at /workspace. Use the tools to "
    "read files, run commands and edit code. Run the test suite before you finish. "
) * 12
_TOOLS = [
    {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {
                "type": "object",
                "properties": {key: {"type": "string"} for key in keys},
                "required": list(keys),
            },
        },
    }
    for name, description, keys in (
        ("bash", "Run a shell command in the workspace.", ("command",)),
        ("read", "Read a file.", ("path",)),
        ("edit", "Replace text in a file.", ("path", "oldText", "newText")),
        ("write", "Write a file.", ("path", "content")),
    )
]


@dataclass(frozen=True, slots=True)
class Scenario:
    size: str = "100"
    blocked: bool = False
    paced: bool = False

    @property
    def model(self) -> str:
        return (
            "bench-"
            + self.size
            + ("-block" if self.blocked else "")
            + ("-paced" if self.paced else "")
        )

    @classmethod
    def from_model(cls, model: str) -> Scenario:
        parts = model.removeprefix("bench-").split("-")
        size = parts[0] if parts[0] in ARGUMENT_SIZES else "100"
        return cls(size=size, blocked="block" in parts[1:], paced="paced" in parts[1:])

    @staticmethod
    def call_id(*, reasked: bool = False) -> str:
        return (REASK_MARKER if reasked else CALL_MARKER).decode() + "0"

    def command(self, *, reasked: bool = False) -> str:
        if reasked:
            return REASK_COMMAND
        if self.blocked:
            return BLOCKED_COMMAND
        return shell_script(ARGUMENT_SIZES[self.size])


def shell_script(size: int) -> str:
    """A benign shell script of ``size`` bytes (JSON arguments are a little longer)."""
    rng = random.Random(size)
    script = ""
    while len(script) < size:
        script += rng.choice(_SAFE_COMMANDS) + " && "
    return script[:size].rsplit(" && ", 1)[0]


def request_body(scenario: Scenario, *, stream: bool, user: int = 0, history: int = 0) -> bytes:
    """A chat request of a pi-like harness: about 3 KB for a first turn; each of ``history``
    earlier turns adds a ``bash`` call and its 3.8 KB output (25 turns: about 100 KB)."""
    messages: list[dict[str, object]] = [
        {"role": "system", "content": _SYSTEM_PROMPT},
        {"role": "user", "content": f"Fix the failing test in tests/test_calc.py (#{user})."},
    ]
    rng = random.Random(user)
    for turn in range(history):
        call_id = f"call_hist{turn}"
        command = rng.choice(_SAFE_COMMANDS)
        call = {"name": "bash", "arguments": json.dumps({"command": command})}
        messages.append(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [{"id": call_id, "type": "function", "function": call}],
            }
        )
        output = "\n".join(f"tests/test_calc.py:{n}: passed in 0.{n:02d}s" for n in range(90))
        messages.append({"role": "tool", "tool_call_id": call_id, "content": output})
    body = {
        "model": scenario.model,
        "messages": messages,
        "tools": _TOOLS,
        "stream": stream,
        "max_tokens": 1024,
    }
    return json.dumps(body, separators=(",", ":")).encode()
