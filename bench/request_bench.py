"""Cost of reading one model request: JSON decoding, the depth bound, the field validation.

Times, per dialect, on realistic conversations of about 10 KB and 100 KB (a harness's tools,
then user / assistant-with-call / tool-result turns): ``json.loads`` alone, ``loads_json``
(``json.loads`` plus the depth check), ``validate_request`` (the pydantic models of the fields
the proxy reads) and the whole ``Dialect.parse_request`` (validation, summary and prefix
hashes). Prints the median of timeit repeats in µs per request.

    .venv/bin/python bench/request_bench.py
"""

from __future__ import annotations

import json
import statistics
import timeit
from typing import Any

from safeagents.protocols import (
    CHAT,
    MAX_REQUEST_DEPTH,
    MESSAGES,
    RESPONSES,
    Dialect,
    loads_json,
    validate_request,
)

SIZES = {"10 KB": 10_000, "100 KB": 100_000}
_SCHEMA = {"type": "object", "properties": {"command": {"type": "string"}}}


def first_body(dialect: str) -> dict[str, Any]:
    """A first request with a harness's usual tools (eight of them)."""
    names = ["bash", "read", "edit", "write", "grep", "find", "ls", "glob"]
    task = "Fix the failing test in tests/test_calc.py."
    if dialect == "chat":
        tools = [
            {"type": "function", "function": {"name": n, "parameters": _SCHEMA}} for n in names
        ]
        messages = [{"role": "system", "content": "You are pi."}, {"role": "user", "content": task}]
        return {"model": "m", "messages": messages, "tools": tools, "stream": True}
    if dialect == "responses":
        tools = [{"type": "function", "name": n, "parameters": _SCHEMA} for n in names]
        user = {
            "type": "message",
            "role": "user",
            "content": [{"type": "input_text", "text": task}],
        }
        return {"model": "m", "instructions": "You are codex.", "input": [user], "tools": tools}
    tools = [{"name": n, "input_schema": _SCHEMA} for n in names]
    messages = [{"role": "user", "content": task}]
    return {"model": "m", "system": "You are Claude.", "messages": messages, "tools": tools}


def _turn(dialect: str, n: int) -> list[dict[str, Any]]:
    command = f"python -m pytest -q tests/test_{n}.py"
    output = "." * 200 + f" {n} passed\n" + "log line\n" * 20
    if dialect == "chat":
        call = {"id": f"c{n}", "type": "function", "function": {"name": "bash"}}
        call["function"]["arguments"] = json.dumps({"command": command})
        return [
            {"role": "assistant", "content": "Running the tests.", "tool_calls": [call]},
            {"role": "tool", "tool_call_id": f"c{n}", "content": output},
        ]
    if dialect == "responses":
        return [
            {
                "type": "function_call",
                "call_id": f"c{n}",
                "name": "shell_command",
                "arguments": json.dumps({"command": command}),
            },
            {"type": "function_call_output", "call_id": f"c{n}", "output": output},
        ]
    use = {"type": "tool_use", "id": f"t{n}", "name": "Bash", "input": {"command": command}}
    result = {"type": "tool_result", "tool_use_id": f"t{n}", "content": output}
    return [
        {"role": "assistant", "content": [{"type": "text", "text": "Running."}, use]},
        {"role": "user", "content": [result]},
    ]


def body(dialect: str, size: int) -> bytes:
    value = first_body(dialect)
    key = "input" if dialect == "responses" else "messages"
    n = 0
    while len(json.dumps(value)) < size:
        value[key] += _turn(dialect, n)
        n += 1
    return json.dumps(value).encode()


def per_call(statement: Any, number: int) -> float:
    runs = timeit.repeat(statement, number=number, repeat=7)
    return statistics.median(runs) / number * 1e6


def row(dialect: Dialect, label: str, size: int) -> str:
    raw = body(dialect.name, size)
    value = json.loads(raw)
    number = 2000 if size < 50_000 else 200
    loads = per_call(lambda: json.loads(raw), number)
    bounded = per_call(lambda: loads_json(raw, MAX_REQUEST_DEPTH), number)
    validate = per_call(lambda: validate_request(dialect.name, value), number)
    parse = per_call(lambda: dialect.parse_request(value), number)
    return (
        f"{dialect.name:10} {label:7} {loads:11.1f} {bounded:11.1f} {validate:9.1f} {parse:14.1f}"
    )


def main() -> None:
    print(
        f"{'dialect':10} {'size':7} {'json.loads':>11} {'loads_json':>11} "
        f"{'validate':>9} {'parse_request':>14}   (µs per request)"
    )
    for dialect in (CHAT, RESPONSES, MESSAGES):
        for label, size in SIZES.items():
            print(row(dialect, label, size))


if __name__ == "__main__":
    main()
