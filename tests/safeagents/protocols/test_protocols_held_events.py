"""``held_events``: the upstream's own bytes complete the client's stream when nothing changed."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from safeagents.protocols import CHAT, MESSAGES, RESPONSES, Dialect, parse_events

DATA = Path(__file__).parent / "data"
REPLAYABLE: list[tuple[Dialect, str]] = [
    (CHAT, "chat_openai_tools"),
    (CHAT, "chat_vllm_tokens"),
    (CHAT, "chat_tool_small"),
    (RESPONSES, "responses_codex"),
    (RESPONSES, "responses_small"),
    (MESSAGES, "messages_claude"),
    (MESSAGES, "messages_small"),
]


def stream_of(name: str) -> bytes:
    return (DATA / f"{name}.sse").read_bytes()


def events_only(stream: bytes) -> bytes:
    """The stream without what carries no event (comments, keep-alives)."""
    return b"".join(event.raw for event in parse_events(stream))


def head_and_held(dialect: Dialect, stream: bytes, cuts: list[int]) -> tuple[bytes, bytes | None]:
    assembler = dialect.assembler()
    bounds = [0, *sorted(cut % (len(stream) + 1) for cut in cuts), len(stream)]
    head = b"".join(assembler.feed(stream[a:b]) for a, b in itertools.pairwise(bounds))
    assembler.finish()
    return head, assembler.held_events()


@pytest.mark.parametrize(("dialect", "name"), REPLAYABLE, ids=[name for _, name in REPLAYABLE])
def test_forwarded_head_plus_held_events_are_the_upstream_stream(
    dialect: Dialect, name: str
) -> None:
    stream = stream_of(name)
    head, held = head_and_held(dialect, stream, [])
    assert held  # tool calls (and the end of the stream) were held
    assert head + held == events_only(stream)


@settings(max_examples=60, deadline=None)
@given(
    st.sampled_from(REPLAYABLE),
    st.lists(st.integers(min_value=0, max_value=20_000), max_size=8),
)
def test_any_chunking_gives_the_same_bytes(fixture: tuple[Dialect, str], cuts: list[int]) -> None:
    dialect, name = fixture
    stream = stream_of(name)
    head, held = head_and_held(dialect, stream, cuts)
    assert held is not None and head + held == events_only(stream)


def _chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
    choice = {"index": 0, "delta": delta, "finish_reason": finish}
    chunk = {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m"}
    return b"data: " + json.dumps({**chunk, "choices": [choice]}).encode() + b"\n\n"


CALL = {"index": 0, "id": "c1", "type": "function", "function": {"name": "sh", "arguments": "{}"}}


def test_an_event_forwarded_in_part_rules_out_the_replay() -> None:
    """Text and a call in one chunk: the client got a re-encoded text-only version."""
    stream = _chunk({"role": "assistant", "content": "hi", "tool_calls": [CALL]})
    stream += _chunk({}, "tool_calls") + b"data: [DONE]\n\n"
    head, held = head_and_held(CHAT, stream, [])
    assert head and held is None


def test_text_after_a_held_call_rules_out_the_replay() -> None:
    """Replaying the held call after that text would reorder the stream."""
    stream = _chunk({"role": "assistant", "content": "a"}) + _chunk({"tool_calls": [CALL]})
    stream += _chunk({"content": "b"}) + _chunk({}, "tool_calls") + b"data: [DONE]\n\n"
    head, held = head_and_held(CHAT, stream, [])
    assert b'"b"' in head and held is None


def test_token_fields_stripped_for_the_client_rule_out_the_replay() -> None:
    stream = stream_of("chat_vllm_tokens")
    request = CHAT.parse_request({"model": "m", "messages": [{"role": "user", "content": "x"}]})
    assembler = CHAT.assembler(request)
    assembler.feed(stream)
    assembler.finish()
    assert assembler.held_events() is None
