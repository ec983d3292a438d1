"""Training rows from a session's recorded turns, on the engine's own token ids.

Turns are linked by exact token prefix: a turn whose prompt ids start with everything a row
holds so far (earlier prompts and completions) extends that row; its new prompt tokens are
context (mask 0) and its completion tokens are trained (mask 1). Where no row is a prefix of
the prompt (history compaction, dropped reasoning, a branch from an earlier point), the turn
starts a new row whose whole prompt is context. Nothing is ever re-tokenised.

A re-ask's prompt holds the withheld answer (spliced in with its rejection), so a blocked
attempt's completion is trained inside the re-ask's row when the re-rendered answer matches
the sampled tokens, and as a row of its own when it does not; either way once, with the
session's reward.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from safeagents.protocols import Sampling
from safeagents.store import TurnRecord

__all__ = ["EXCLUDED_REASONS", "Row", "RowBuild", "build_rows"]

EXCLUDED_REASONS = (
    "side",
    "aborted",
    "error",
    "no_tokens",
    "empty_prompt",
    "empty_completion",
    "misaligned_logprobs",
    "sampling",
)
"""Why a turn contributes nothing, as counted in :attr:`RowBuild.excluded`."""


@dataclass(frozen=True, slots=True)
class Row:
    """One packed training sequence of a session.

    ``logprobs[i]`` is the behaviour logprob the engine reported for ``input_ids[i]`` (given
    ``input_ids[:i]``) where ``loss_mask[i]`` is 1, and 0.0 on context tokens. ``models``
    and ``turns`` name, per trained turn in order, the served model (``{harness}-v{k}`` for
    an adapter version) and the turn's ``seq`` in the store.
    """

    input_ids: tuple[int, ...]
    loss_mask: tuple[int, ...]
    logprobs: tuple[float, ...]
    session_id: str
    harness: str
    task_id: str | None
    models: tuple[str, ...]
    turns: tuple[int, ...]

    def __post_init__(self) -> None:
        lengths = {len(self.input_ids), len(self.loss_mask), len(self.logprobs)}
        if len(lengths) != 1:
            raise ValueError(
                f"row of session {self.session_id!r}: input_ids, loss_mask and logprobs "
                f"differ in length ({len(self.input_ids)}, {len(self.loss_mask)}, "
                f"{len(self.logprobs)})"
            )
        if len(self.models) != len(self.turns):
            raise ValueError("a row needs one model name per trained turn")

    @property
    def num_tokens(self) -> int:
        return len(self.input_ids)

    @property
    def num_trained(self) -> int:
        return sum(self.loss_mask)


@dataclass(frozen=True, slots=True)
class RowBuild:
    """The rows of one session and what was left out of them."""

    rows: tuple[Row, ...]
    excluded: Mapping[str, int] = field(default_factory=dict)
    """Turns left out, by reason (see ``EXCLUDED_REASONS``)."""
    forks: int = 0
    """Rows started while other rows existed: places where the token prefix broke."""


class _OpenRow:
    """A row being assembled; ``tokens`` is what a linked turn's prompt must start with."""

    __slots__ = ("logprobs", "mask", "models", "tokens", "turns")

    def __init__(self) -> None:
        self.tokens: list[int] = []
        self.mask: list[int] = []
        self.logprobs: list[float] = []
        self.models: list[str] = []
        self.turns: list[int] = []

    def is_prefix_of(self, prompt: tuple[int, ...]) -> bool:
        size = len(self.tokens)
        return size <= len(prompt) and list(prompt[:size]) == self.tokens

    def extend(self, turn: TurnRecord, prompt: tuple[int, ...]) -> None:
        assert turn.tokens is not None
        context = prompt[len(self.tokens) :]
        completion = turn.tokens.completion_token_ids
        self.tokens.extend(context)
        self.mask.extend([0] * len(context))
        self.logprobs.extend([0.0] * len(context))
        self.tokens.extend(completion)
        self.mask.extend([1] * len(completion))
        self.logprobs.extend(turn.tokens.logprobs)
        self.models.append(turn.model)
        self.turns.append(turn.seq)

    def freeze(self, session_id: str, harness: str, task_id: str | None) -> Row:
        return Row(
            input_ids=tuple(self.tokens),
            loss_mask=tuple(self.mask),
            logprobs=tuple(self.logprobs),
            session_id=session_id,
            harness=harness,
            task_id=task_id,
            models=tuple(self.models),
            turns=tuple(self.turns),
        )


def _exclusion(turn: TurnRecord, sampling: Mapping[str, Any] | None) -> str | None:
    """Why ``turn`` cannot be trained on, or ``None`` when it can."""
    if turn.kind == "side":
        return "side"
    if turn.status != "ok":
        return turn.status
    tokens = turn.tokens
    if tokens is None:
        return "no_tokens"
    if not tokens.prompt_token_ids:
        return "empty_prompt"
    if not tokens.completion_token_ids:
        return "empty_completion"
    if len(tokens.logprobs) != len(tokens.completion_token_ids):
        return "misaligned_logprobs"
    if sampling is not None and tokens.sampling != sampling:
        return "sampling"  # behaviour and target sampling differ: the ratio would be biased
    return None


def _parent(rows: list[_OpenRow], prompt: tuple[int, ...]) -> _OpenRow | None:
    """The longest row that ``prompt`` extends exactly (ties: the most recent)."""
    best: _OpenRow | None = None
    for row in reversed(rows):
        if (best is None or len(row.tokens) > len(best.tokens)) and row.is_prefix_of(prompt):
            best = row
    return best


def build_rows(
    turns: Iterable[TurnRecord],
    *,
    task_id: str | None = None,
    sampling: Sampling | None = None,
) -> RowBuild:
    """The training rows of one session's ``turns`` (any order; linked in ``seq`` order).

    With ``sampling`` (the run's), a turn the proxy did not record as sampled exactly so is
    refused (``"sampling"``)."""
    wanted = sampling.to_json() if sampling is not None else None
    ordered = sorted(turns, key=lambda turn: turn.seq)
    sessions = {turn.session_id for turn in ordered}
    if len(sessions) > 1:
        raise ValueError(f"turns of several sessions given: {sorted(sessions)}")
    excluded: Counter[str] = Counter()
    open_rows: list[_OpenRow] = []
    forks = 0
    for turn in ordered:
        reason = _exclusion(turn, wanted)
        if reason is not None:
            excluded[reason] += 1
            continue
        assert turn.tokens is not None
        prompt = turn.tokens.prompt_token_ids
        row = _parent(open_rows, prompt)
        if row is None:
            forks += bool(open_rows)
            row = _OpenRow()
            open_rows.append(row)
        row.extend(turn, prompt)
    if not ordered:
        return RowBuild(rows=())
    first = ordered[0]
    rows = tuple(row.freeze(first.session_id, first.harness, task_id) for row in open_rows)
    return RowBuild(rows=rows, excluded=dict(excluded), forks=forks)
