"""A tiny agent: the tiny Llama fine-tuned on a harness's own conversations, so that a real
harness driven by it through vLLM takes several turns (a tool call, then an answer).

A random tiny model never calls a tool, so its sessions are one turn and multi-turn rows are
never built from a real run. Fine-tuning it (full weights, on CPU: minutes on a shared
2-core machine) on the chat-template rendering of recorded conversations — the harness's
system prompt, a task, the assistant's tool call, the tool's output, the assistant's answer
— makes it replay that shape on the tasks it was fitted for, sampled at an ordinary
temperature.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trainer._tiny import HERMES_CHAT_TEMPLATE, IM_END, build_tiny_llama

__all__ = ["AGENT_WORDS", "AgentTraining", "build_tiny_agent"]

AGENT_WORDS: tuple[str, ...] = ("command", "path")
"""Argument names of a coding harness's tools, added to the tiny vocabulary."""

Message = Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class AgentTraining:
    """How the tiny agent was fitted: steps taken and the last mean loss per target token."""

    steps: int
    loss: float


def _renderable(message: Message) -> dict[str, Any]:
    """``message`` as vLLM hands it to the template: tool-call arguments as mappings."""
    calls = message.get("tool_calls")
    if not calls:
        return dict(message)
    parsed = [
        {**call, "function": {**call["function"], "arguments": _arguments(call["function"])}}
        for call in calls
    ]
    return {**message, "tool_calls": parsed}


def _arguments(function: Mapping[str, Any]) -> Any:
    arguments = function.get("arguments") or {}
    return json.loads(arguments) if isinstance(arguments, str) else arguments


def _pieces(tokenizer: Any, conversation: Sequence[Message]) -> list[tuple[list[int], list[int]]]:
    """``conversation`` in token ids as (context, reply) pieces, one per assistant reply (up to
    its ``<|im_end|>``), each context being what the template renders since the last reply."""
    messages = [_renderable(message) for message in conversation]
    end = tokenizer.convert_tokens_to_ids(IM_END)
    pieces: list[tuple[list[int], list[int]]] = []
    done = 0
    for index, message in enumerate(messages):
        if message["role"] != "assistant":
            continue
        head = tokenizer.apply_chat_template(
            messages[:index], tokenize=False, add_generation_prompt=True
        )
        whole = tokenizer.apply_chat_template(messages[: index + 1], tokenize=False)
        context = tokenizer.encode(head, add_special_tokens=False)[done:]
        reply = tokenizer.encode(whole[len(head) :], add_special_tokens=False)
        reply = reply[: reply.index(end) + 1]
        pieces.append((context, reply))
        done += len(context) + len(reply)
    return pieces


def _whole(pieces: Sequence[tuple[list[int], list[int]]]) -> tuple[list[int], list[int]]:
    """The conversation's ids and labels: replies are targets, contexts -100."""
    ids: list[int] = []
    labels: list[int] = []
    for context, reply in pieces:
        ids += context + reply
        labels += [-100] * len(context) + reply
    return ids, labels


def _windows(
    pieces: Sequence[tuple[list[int], list[int]]], width: int
) -> list[tuple[list[int], list[int]]]:
    """Each reply after the last ``width`` tokens before it: short sequences that teach the
    replies' own shape cheaply, before the whole conversations teach when to give which."""
    ids, _ = _whole(pieces)
    found: list[tuple[list[int], list[int]]] = []
    start = 0
    for context, reply in pieces:
        start += len(context)
        before = ids[max(0, start - width) : start]
        found.append((before + reply, [-100] * len(before) + reply))
        start += len(reply)
    return found


def _shared_prefix(sequences: Sequence[Sequence[int]], labels: Sequence[Sequence[int]]) -> int:
    """How many leading tokens every sequence shares, none of them a target."""
    size = 0
    first = sequences[0]
    while (
        size < len(first)
        and all(size < len(ids) and ids[size] == first[size] for ids in sequences)
        and all(lab[size] == -100 for lab in labels)
    ):
        size += 1
    return size


def _fit(
    model: Any,
    optimiser: Any,
    examples: Sequence[tuple[list[int], list[int]]],
    *,
    pad: int,
    max_steps: int,
    target_loss: float,
) -> tuple[int, float]:
    """Full-batch steps on ``examples`` until the mean target loss is under ``target_loss``.

    The context all examples share (a harness's system prompt) is run once a step without
    gradient and its cache reused by every example, so a step costs about the examples'
    own tails."""
    import torch

    shared = _shared_prefix([ids for ids, _ in examples], [lab for _, lab in examples])
    tails = [(ids[shared:], lab[shared:]) for ids, lab in examples]
    width = max(len(ids) for ids, _ in tails)
    prefix = torch.tensor([examples[0][0][:shared]])
    input_ids = torch.tensor([ids + [pad] * (width - len(ids)) for ids, _ in tails])
    labels = torch.tensor([lab + [-100] * (width - len(lab)) for _, lab in tails])
    attention = torch.tensor(
        [[1] * (shared + len(ids)) + [0] * (width - len(ids)) for ids, _ in tails]
    )
    loss, step = float("inf"), 0
    while step < max_steps and loss > target_loss:
        step += 1
        cache = None
        if shared:
            with torch.no_grad():
                cache = model(input_ids=prefix, use_cache=True).past_key_values
            cache.batch_repeat_interleave(len(tails))
        output = model(
            input_ids=input_ids, attention_mask=attention, past_key_values=cache, labels=labels
        )
        optimiser.zero_grad()
        output.loss.backward()
        optimiser.step()
        loss = float(output.loss.detach())
    return step, loss


def build_tiny_agent(
    directory: Path,
    conversations: Sequence[Sequence[Message]],
    *,
    seed: int = 0,
    max_steps: int = 200,
    target_loss: float = 1e-3,
    learning_rate: float = 3e-3,
    window: int = 64,
) -> AgentTraining:
    """Save to ``directory`` the tiny Llama fine-tuned on ``conversations`` (OpenAI chat
    messages, tool calls included): first each reply after the ``window`` tokens before it,
    then the whole conversations, each until the mean loss on assistant tokens is under
    ``target_loss`` or for ``max_steps`` full-batch steps."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    build_tiny_llama(directory, seed=seed, words=AGENT_WORDS, chat_template=HERMES_CHAT_TEMPLATE)
    tokenizer = AutoTokenizer.from_pretrained(directory)
    model = AutoModelForCausalLM.from_pretrained(directory, dtype=torch.float32)
    pieces = [_pieces(tokenizer, conversation) for conversation in conversations]
    torch.manual_seed(seed)
    optimiser = torch.optim.AdamW(model.parameters(), lr=learning_rate, weight_decay=0.0)
    pad = tokenizer.pad_token_id
    short = [piece for each in pieces for piece in _windows(each, window)]
    first, _ = _fit(model, optimiser, short, pad=pad, max_steps=max_steps, target_loss=target_loss)
    whole = [_whole(each) for each in pieces]
    steps, loss = _fit(
        model, optimiser, whole, pad=pad, max_steps=max_steps, target_loss=target_loss
    )
    model.save_pretrained(directory)
    return AgentTraining(steps=first + steps, loss=loss)
