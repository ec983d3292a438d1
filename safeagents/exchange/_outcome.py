"""How one exchange ended, recorded exactly once whatever happens.

Front ends create an :class:`Outcome` once the exchange is prepared and end it one way:
:meth:`Outcome.settle` (check, re-ask, record), :meth:`Outcome.fail` or
:meth:`Outcome.upstream_failed`. ``async with outcome:`` (or :meth:`Outcome.close`, for a
lifetime no ``with`` block spans) is the ``finally``: an exchange nobody ended was aborted
(client gone, cancelled) or broke (an exception), and is recorded as such. A blocked answer
is stored before its re-ask is sent (so a crash meanwhile loses no finding); the single record
then stores the rest.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Sequence
from types import TracebackType
from typing import Any

import anyio

from safeagents.exchange._enforce import FindingKey, finding_key
from safeagents.exchange._exchange import Attempt, Decision, Exchange, ExchangeFailed
from safeagents.exchange._services import Services
from safeagents.exchange._text_mode import ending
from safeagents.exchange._upstream import UpstreamError
from safeagents.rules import Finding
from safeagents.store import TurnStatus

__all__ = ["ABORTED", "STOPPED_TEXT", "Outcome"]

logger = logging.getLogger("safeagents.exchange")
ABORTED = "the client disconnected before the answer was complete"
STOPPED_TEXT = "safeagents stopped this run after a blocked tool call; it cannot continue."


class Outcome:
    """One exchange's first attempt and its single record (the first claim wins)."""

    __slots__ = ("_prior", "attempts", "claimed", "ex", "first", "services")

    def __init__(self, services: Services, ex: Exchange) -> None:
        self.services = services
        self.ex = ex
        self.first = Attempt(kind=ex.plan.kind, request=ex.upstream_body)
        self.attempts = [self.first]
        """Every attempt made so far (re-asks follow the first)."""
        self.claimed = False
        """Someone is recording (or has recorded) this exchange; nobody else will."""
        self._prior: asyncio.Task[tuple[Finding, ...]] | None = None

    def begin_checks(self) -> None:
        """Start the check's work on the request's own conversation (see
        :meth:`Enforcer.prior`), to run while the upstream works on the answer."""
        if self._prior is None:
            self._prior = asyncio.ensure_future(self.services.enforcer.prior(self.ex))

    async def __aenter__(self) -> Outcome:
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if isinstance(error, Exception):
            await self.fail(f"internal: {error!r}")
        else:
            await self.close()

    async def close(self) -> None:
        """Record the exchange as aborted unless it ended otherwise."""
        await self.fail(ABORTED, status="aborted")

    async def settle(self, *, text_forwarded: bool = False) -> Decision | UpstreamError:
        """Check the first attempt (answered), re-ask as the strategy says, and record.

        A failed re-ask or a bug in enforcement is recorded and returned as the error the
        harness gets; cancelled meanwhile, the exchange is recorded as aborted."""
        if self.claimed:
            raise RuntimeError("this exchange was already recorded")
        self.claimed = True
        services, ex = self.services, self.ex
        try:
            decision = await services.enforcer.decide(
                ex,
                self.first,
                text_forwarded=text_forwarded,
                before_reask=self._before_reask,
                reported=self._reported,
                prior=self._prior,
            )
        except ExchangeFailed as failed:
            services.metrics.inc("safeagents_upstream_errors_total", kind=failed.error.kind)
            await self._failure(failed.attempts, "error", failed.error.message)
            return failed.error
        except Exception as bug:
            logger.exception("enforcement failed")
            await self._failure(self.attempts, "error", f"internal: {bug!r}")
            return UpstreamError(500, "internal", f"safeagents internal error: {bug!r}")
        except BaseException:
            await self._failure(self.attempts, "aborted", ABORTED)
            raise
        await _shielded(services.recorder.record(ex, decision))
        return decision

    async def _reported(self) -> set[FindingKey]:
        """The findings the store has for the session (any process may have recorded them)."""
        session = await self.services.store.get_session(self.ex.session_id)
        return {finding_key(f) for f in session.findings} if session is not None else set()

    async def _before_reask(self, attempts: list[Attempt]) -> None:
        """A blocked answer is durable before its re-ask is sent."""
        self.attempts = attempts  # a re-ask cut short is recorded with them
        await _shielded(self.services.recorder.record_blocked(self.ex, attempts))

    async def stopped(self) -> dict[str, Any]:
        """Record and return the answer a stopped run gets without reaching the upstream."""
        ex = self.ex
        delivered = ending(ex, STOPPED_TEXT)
        self.first.finish(None)
        self.first.delivered = delivered
        if not self.claimed:
            self.claimed = True
            decision = Decision(delivered=delivered, attempts=[self.first], stopped=True)
            await _shielded(self.services.recorder.record(ex, decision))
        return delivered

    async def fail(self, error: str, *, status: TurnStatus = "error") -> None:
        """Record the first attempt as failed (no answer); the session's state stays."""
        if not self.claimed:
            self.claimed = True
            _drop(self._prior)
            await self._failure([self.first], status, error)

    async def upstream_failed(self, error: UpstreamError) -> None:
        """Record an upstream fault (counted by kind)."""
        if not self.claimed:
            self.services.metrics.inc("safeagents_upstream_errors_total", kind=error.kind)
            await self.fail(error.message)

    async def _failure(self, attempts: Sequence[Attempt], status: TurnStatus, error: str) -> None:
        await _shielded(self.services.recorder.record_failure(self.ex, attempts, status, error))


def _drop(task: asyncio.Task[Any] | None) -> None:
    """Cancel work nobody will wait for (a failure in it was no part of this outcome)."""
    if task is not None and not task.cancel() and not task.cancelled():
        task.exception()  # retrieved: no "never retrieved" report


async def _shielded(work: Awaitable[Any]) -> None:
    with anyio.CancelScope(shield=True):
        await work
