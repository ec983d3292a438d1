"""The tiny agent's template and training pieces (no model: the fitting itself is exercised by
tests/trainer/test_multiturn_ratio.py, which samples the fitted agent through vLLM)."""

from __future__ import annotations

import json
from typing import Any

import pytest

pytest.importorskip("transformers")

from trainer._tiny import HERMES_CHAT_TEMPLATE, TINY_WORDS, build_tiny_tokenizer
from trainer._tiny_agent import (
    AGENT_WORDS,
    _pieces,
    _renderable,
    _shared_prefix,
    _whole,
    _windows,
)

CALL = '<tool_call>\n{"name": "bash", "arguments": {"command": "ls"}}\n</tool_call>'
CONVERSATION: list[dict[str, Any]] = [
    {"role": "system", "content": "you are a tool"},
    {"role": "user", "content": [{"type": "text", "text": "count the file ."}]},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "c1",
                "type": "function",
                "function": {"name": "bash", "arguments": '{"command":"ls"}'},
            }
        ],
    },
    {"role": "tool", "tool_call_id": "c1", "content": "calc.py\n"},
    {"role": "assistant", "content": "done"},
]


@pytest.fixture(scope="module")
def tokenizer() -> Any:
    return build_tiny_tokenizer(AGENT_WORDS, HERMES_CHAT_TEMPLATE)


def test_added_words_are_tokens_after_the_tiny_ones(tokenizer: Any) -> None:
    plain = build_tiny_tokenizer()
    vocabulary = tokenizer.get_vocab()
    assert all(vocabulary[word] == plain.get_vocab()[word] for word in TINY_WORDS)
    assert sorted(vocabulary[word] for word in AGENT_WORDS) == list(
        range(len(plain), len(plain) + len(AGENT_WORDS))
    )
    assert tokenizer.unk_token_id not in tokenizer.encode('{"command": "ls", "path": "a"}')


def test_a_tool_call_renders_as_hermes_reads_it_from_either_argument_form(tokenizer: Any) -> None:
    # Harnesses send arguments as a JSON string; vLLM hands templates a mapping.
    parsed = json.loads(CONVERSATION[2]["tool_calls"][0]["function"]["arguments"])
    as_mapping = [
        *CONVERSATION[:2],
        {**CONVERSATION[2], "tool_calls": [{"function": {"name": "bash", "arguments": parsed}}]},
    ]
    rendered = tokenizer.apply_chat_template(as_mapping, tokenize=False)
    assert rendered.endswith(f"<|im_start|>assistant\n{CALL}<|im_end|>\n")
    body = CALL.removeprefix("<tool_call>\n").removesuffix("\n</tool_call>")
    assert json.loads(body) == {"name": "bash", "arguments": {"command": "ls"}}


def test_pieces_are_the_conversation_token_for_token(tokenizer: Any) -> None:
    pieces = _pieces(tokenizer, CONVERSATION)
    (_, call), (_, answer) = pieces
    end = tokenizer.convert_tokens_to_ids("<|im_end|>")
    assert tokenizer.decode(call) == CALL + "<|im_end|>"
    assert answer == [tokenizer.convert_tokens_to_ids("done"), end]
    ids, labels = _whole(pieces)
    # What vLLM's next prompt holds: each reply, then what the template adds after it.
    full = tokenizer.apply_chat_template([_renderable(m) for m in CONVERSATION], tokenize=False)
    assert ids == tokenizer.encode(full)[: len(ids)]
    assert [
        token for token, label in zip(ids, labels, strict=True) if label != -100
    ] == call + answer


def test_windows_keep_each_reply_after_a_bounded_context(tokenizer: Any) -> None:
    pieces = _pieces(tokenizer, CONVERSATION)
    windows = _windows(pieces, 4)
    assert [ids[4:] for ids, _ in windows] == [reply for _, reply in pieces]
    assert all(labels[:4] == [-100] * 4 for _, labels in windows)


def test_the_shared_prefix_stops_at_a_difference_or_a_target() -> None:
    assert _shared_prefix([[1, 2, 3, 4], [1, 2, 5]], [[-100] * 4, [-100] * 3]) == 2
    assert _shared_prefix([[1, 2, 3], [1, 2, 3]], [[-100, 2, 3], [-100, 2, 3]]) == 1
