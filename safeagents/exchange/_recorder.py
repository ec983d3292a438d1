"""Recording an exchange: turns, findings and hidden history into the store, then the sinks."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import pluggy

from safeagents.exchange._config import ProxyConfig
from safeagents.exchange._exchange import Attempt, Decision, Exchange
from safeagents.exchange._metrics import Metrics
from safeagents.store import (
    HiddenEntry,
    SessionRecord,
    SessionUpdate,
    Store,
    TokenRecord,
    TurnRecord,
    TurnStatus,
)

__all__ = ["Recorder"]

logger = logging.getLogger("safeagents.proxy")


class Recorder:
    """Writes exchanges to the store and hands recorded turns to sink plugins."""

    def __init__(
        self,
        config: ProxyConfig,
        store: Store,
        metrics: Metrics,
        plugins: pluggy.PluginManager,
    ) -> None:
        self.config = config
        self.store = store
        self.metrics = metrics
        self.plugins = plugins
        self._sink_tasks: set[asyncio.Future[Any]] = set()

    def _turn(self, ex: Exchange, attempt: Attempt, index: int) -> TurnRecord:
        tokens = None
        if self.config.capture_tokens and attempt.response is not None:
            captured = ex.dialect.extract_tokens(attempt.response)
            if captured is not None:
                tokens = TokenRecord(
                    captured.prompt_token_ids,
                    captured.completion_token_ids,
                    captured.logprobs,
                    sampling=ex.sampling.to_json() if ex.sampling is not None else None,
                )
        response = attempt.response or {}
        usage = response.get("usage")
        model = response.get("model") or attempt.request.get("model") or ex.info.model
        return TurnRecord(
            session_id=ex.session_id,
            exchange=ex.id,
            attempt=index,
            kind=attempt.kind,
            status=attempt.status,
            dialect=ex.dialect.name,
            harness=ex.harness,
            model=str(model or ""),
            requested_model=ex.info.model,
            stream=ex.stream and attempt.kind != "reask",
            request=attempt.request,
            request_json=ex.upstream_text if attempt.request is ex.upstream_body else None,
            response=attempt.response,
            delivered=attempt.delivered,
            findings=tuple(attempt.findings),
            usage=usage if isinstance(usage, dict) else None,
            tokens=tokens,
            error=attempt.error,
            started=attempt.started,
            ended=attempt.ended or attempt.started,
        )

    def _update(
        self, ex: Exchange, decision: Decision | None, attempts: Sequence[Attempt] = ()
    ) -> SessionUpdate:
        """The session change of a completed exchange (``decision``), or of failed
        ``attempts``: their findings still count, but the main line and history stay."""
        findings = [finding for attempt in attempts for finding in attempt.findings]
        return SessionUpdate(
            session_id=ex.session_id,
            harness=ex.harness,
            dialect=ex.dialect.name,
            cwd=ex.analysis.cwd,
            model=ex.info.model,
            root_key=ex.root,
            tool_calls=decision.tool_calls if decision else sum(a.calls for a in attempts),
            hacked=decision.hacked if decision else any(f.hacked for f in findings),
            stopped=decision.stopped if decision else False,
            main=ex.plan.main if decision else None,
            read_main=(ex.session.main_count, ex.session.main_key) if ex.session else (-1, ""),
        )

    async def record_blocked(self, ex: Exchange, attempts: Sequence[Attempt]) -> None:
        """Store the attempts answered and checked so far, before a re-ask is sent: their
        turns and findings, the session's calls and hacked state, committed when this
        returns (a crash during the re-ask loses none of it). The exchange's own record
        then skips them."""
        pending = _unrecorded(attempts)
        if not pending:
            return
        turns = [self._turn(ex, attempt, index) for index, attempt in pending]
        update = self._update(ex, None, [attempt for _, attempt in pending])
        stored = await self._write(update, turns, ())
        for _, attempt in pending:
            attempt.recorded = True
        self._count_findings(stored)

    async def record(self, ex: Exchange, decision: Decision) -> list[TurnRecord]:
        """Store a completed exchange (its attempts not stored yet, the hidden history it
        created, the session's main line)."""
        pending = _unrecorded(decision.attempts)
        turns = [self._turn(ex, attempt, index) for index, attempt in pending]
        update = self._update(ex, decision)
        counted = sum(attempt.calls for attempt in decision.attempts if attempt.recorded)
        if counted:
            update = replace(update, tool_calls=update.tool_calls - counted)
        stored = await self._write(update, turns, decision.hidden)
        self.metrics.inc("safeagents_tool_calls_total", decision.tool_calls, harness=ex.harness)
        self.metrics.inc("safeagents_blocked_calls_total", decision.blocked)
        self.metrics.inc("safeagents_reasks_total", decision.reasks)
        self._count_findings(stored)
        self._finished(ex, "ok")
        return stored

    async def record_failure(
        self, ex: Exchange, attempts: Sequence[Attempt], status: TurnStatus, error: str
    ) -> None:
        """Store attempts that did not lead to an answer; the session's state is unchanged
        (but for the findings of answers that were checked)."""
        pending = _unrecorded(attempts)
        for _, attempt in pending:
            if attempt.status == "ok":
                attempt.fail(status, error)
        if pending:
            turns = [self._turn(ex, attempt, index) for index, attempt in pending]
            await self._write(self._update(ex, None, [a for _, a in pending]), turns, ())
        self._finished(ex, status)

    def _count_findings(self, stored: Sequence[TurnRecord]) -> None:
        for turn in stored:
            for finding in turn.findings:
                self.metrics.inc(
                    "safeagents_findings_total", rule_id=finding.rule_id, action=finding.action
                )

    async def _write(
        self, update: SessionUpdate, turns: list[TurnRecord], hidden: Sequence[HiddenEntry]
    ) -> list[TurnRecord]:
        alone = self.metrics.value("safeagents_in_flight_requests") <= 1
        stored = await self.store.record_exchange(update, turns, hidden, inline=alone)
        hook = self.plugins.hook.turn_recorded
        if hook.get_hookimpls():
            for turn in stored:
                self._run_sink(lambda turn=turn: hook(turn=turn))
        return stored

    def session_closed(self, session: SessionRecord) -> None:
        hook = self.plugins.hook.session_closed
        if hook.get_hookimpls():
            self._run_sink(lambda: hook(session=session))

    def _run_sink(self, call: Any) -> None:
        future = asyncio.get_running_loop().run_in_executor(None, call)
        self._sink_tasks.add(future)
        future.add_done_callback(self._sink_done)

    def _sink_done(self, future: asyncio.Future[Any]) -> None:
        self._sink_tasks.discard(future)
        if not future.cancelled() and future.exception() is not None:
            logger.error("a sink plugin failed", exc_info=future.exception())

    async def drain(self) -> None:
        """Wait for sink calls still running (at shutdown)."""
        if self._sink_tasks:
            await asyncio.gather(*self._sink_tasks, return_exceptions=True)

    def _finished(self, ex: Exchange, status: str) -> None:
        self.metrics.inc(
            "safeagents_requests_total", status=status, dialect=ex.dialect.name, kind=ex.plan.kind
        )
        self.metrics.observe(max(0.0, time.time() - ex.started), dialect=ex.dialect.name)


def _unrecorded(attempts: Sequence[Attempt]) -> list[tuple[int, Attempt]]:
    """The attempts not in the store yet, with their index in the exchange."""
    return [(index, attempt) for index, attempt in enumerate(attempts) if not attempt.recorded]
