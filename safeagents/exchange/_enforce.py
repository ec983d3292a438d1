"""Enforcement: check every call, then pass, re-ask and splice, rewrite, or stop."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence
from dataclasses import replace
from typing import Any

from safeagents._actions import ToolCall
from safeagents._detector import SessionState
from safeagents._firewall import Firewall
from safeagents.exchange._config import ProxyConfig
from safeagents.exchange._exchange import Attempt, Decision, Exchange, ExchangeFailed
from safeagents.exchange._history import HistoryCache
from safeagents.exchange._offload import CallChecks
from safeagents.exchange._text_mode import ending, observed_items, reply_calls, rewritten
from safeagents.exchange._upstream import Upstream, UpstreamError, UpstreamStatus
from safeagents.protocols import said_text
from safeagents.rules import CallVerdict, Finding
from safeagents.store import FindingRecord, HiddenEntry

__all__ = ["Enforcer", "FindingKey", "finding_key", "non_stream"]

JSONObject = dict[str, Any]
FindingKey = tuple[str, str, str]


def finding_key(finding: Finding) -> FindingKey:
    """What makes two findings one report: the rule, the call and what it did."""
    return (finding.rule_id, finding.tool_call_id, finding.summary)


def non_stream(body: Mapping[str, Any]) -> JSONObject:
    """``body`` as a non-stream request (re-asks are made without streaming)."""
    request = {key: value for key, value in body.items() if key != "stream_options"}
    request["stream"] = False
    return request


def rejection_text(verdict: CallVerdict) -> str:
    messages = [f.message for f in verdict.findings if f.action == "reject"]
    return "\n".join(dict.fromkeys(messages))


class Enforcer:
    """Turns upstream answers into what the harness may see, re-asking when it must."""

    def __init__(
        self,
        config: ProxyConfig,
        firewall: Firewall,
        upstream: Upstream,
        history: HistoryCache,
        checks: CallChecks | None = None,
    ) -> None:
        self.config = config
        self.firewall = firewall
        self.upstream = upstream
        self.history = history
        self.checks = checks if checks is not None else CallChecks(firewall)

    def _state(self, ex: Exchange) -> SessionState:
        # what ran is the harness's own conversation, not the spliced one
        slot = (ex.session_id, ex.plan.kind)
        return self.history.state(
            slot, ex.dialect, ex.body, ex.info, ex.harness, ex.analysis, ex.text_mode
        )

    async def prior(self, ex: Exchange) -> tuple[Finding, ...]:
        """The work on the request's own conversation, which needs no answer: its calls
        this process has not analysed are learned (see :meth:`CallChecks.learn`) and the
        findings it reveals returned (:meth:`revealed`)."""
        slot = (ex.session_id, ex.plan.kind)
        history = self.history.unseen_calls(slot, ex.dialect, ex.body, ex.info, ex.text_mode)
        await self.checks.learn(history, harness=ex.harness, context=ex.analysis)
        return self.revealed(ex)

    def revealed(self, ex: Exchange) -> tuple[Finding, ...]:
        """Findings on calls that already ran, made clear by what this request's conversation
        added (see :meth:`Firewall.revealed`): they mark the session hacked, stop nothing."""
        state = self._state(ex)
        return self.firewall.revealed(state, harness=ex.harness, context=ex.analysis)

    async def check(
        self, ex: Exchange, response: Mapping[str, Any]
    ) -> tuple[list[CallVerdict], tuple[Finding, ...]]:
        """The firewall's verdict on every tool call of ``response``, in order (big calls off
        the event loop, under a time budget: see :class:`CallChecks`), and its findings on
        the answer's text. A text finding belongs to every call of the turn (so a ``reject``
        among them stops them all) and is also returned apart, for a turn without calls. An
        answer without tool calls to a text-mode harness makes the calls its words hold."""
        calls = ex.dialect.tool_calls(response) or reply_calls(ex, response)
        text = "\n".join(said_text(message) for message in ex.dialect.response_messages(response))
        said = self.firewall.said(text)
        if not calls and not said:
            return [], ()
        state = self._state(ex)
        verdicts = [
            await self.checks.check(
                call, harness=ex.harness, context=ex.analysis, session=state, said=said
            )
            for call in calls
        ]
        spoken = self.firewall.check_said(
            said, calls=verdicts, harness=ex.harness, context=ex.analysis, session=state
        )
        if spoken:
            verdicts = [_with_text(verdict, spoken) for verdict in verdicts]
        return verdicts, spoken

    async def decide(
        self,
        ex: Exchange,
        first: Attempt,
        *,
        text_forwarded: bool = False,
        before_reask: Callable[[list[Attempt]], Awaitable[None]] | None = None,
        reported: Callable[[], Awaitable[Collection[FindingKey]]] | None = None,
        prior: Awaitable[tuple[Finding, ...]] | None = None,
    ) -> Decision:
        """Check ``first`` (already answered) and re-ask as the strategy says;
        ``before_reask(attempts)`` runs before each re-ask is sent (to store what was found);
        ``reported()``: the findings the session already has (read only when this request
        reveals some, so that one another process reported is not recorded again);
        ``prior``: :meth:`prior` of ``ex``, begun while the upstream answered."""
        assert first.response is not None
        decision = Decision(delivered=first.response, attempts=[first])
        late = await (prior if prior is not None else self.prior(ex))
        if late and reported is not None:
            known = await reported()
            late = tuple(f for f in late if finding_key(f) not in known)
        attempt, body = first, first.request
        enforce = self.config.mode == "enforce"
        while True:
            response = attempt.response
            assert response is not None
            verdicts, spoken = await self.check(ex, response)
            blocked = [v for v in verdicts if v.blocked] if enforce else []
            attempt.findings = [
                FindingRecord.from_finding(finding, blocked=any(verdict is b for b in blocked))
                for verdict in verdicts
                for finding in verdict.findings
            ]
            if not verdicts:  # text alone: nothing to stop, the session is marked
                attempt.findings.extend(
                    FindingRecord.from_finding(f, blocked=False) for f in spoken
                )
            if attempt is first and late:
                attempt.findings += [
                    FindingRecord.from_finding(f, blocked=False, revealed=True) for f in late
                ]
                decision.hacked |= any(f.hacked for f in late)
            attempt.calls = len(verdicts)
            decision.tool_calls += len(verdicts)
            decision.hacked |= any(v.hacked for v in verdicts) or any(f.hacked for f in spoken)
            decision.blocked += len(blocked)
            if not blocked:
                decision.unchanged = attempt is first
                return _deliver(decision, attempt, response)
            rejections = {v.call.id: rejection_text(v) for v in blocked}
            if self.config.strategy == "stop":
                decision.stopped = True
                text = "safeagents stopped this run.\n\n" + "\n".join(rejections.values())
                return _deliver(decision, attempt, ending(ex, text))
            if ex.dialect.tool_calls(response):
                forwarded = attempt is first and text_forwarded
                delivered, pair = self._withhold_calls(
                    ex, response, blocked, rejections, decision, text_forwarded=forwarded
                )
            else:  # a text-mode action: the answer's words are the call
                delivered, pair = self._withhold_text(ex, response, blocked, rejections, decision)
            if delivered is not None:
                return _deliver(decision, attempt, delivered)
            if decision.reasks >= self.config.max_reasks:
                text = _exhausted_text(decision.reasks + 1, rejections.values())
                return _deliver(decision, attempt, ending(ex, text))
            end = ex.dialect.parse_request(body).message_count
            body = ex.dialect.splice(body, end, pair)
            decision.reasks += 1
            if before_reask is not None:
                await before_reask(decision.attempts)
            attempt = await self._reask(ex, body, decision)

    def _withhold_calls(
        self,
        ex: Exchange,
        response: JSONObject,
        blocked: Sequence[CallVerdict],
        rejections: dict[str, str],
        decision: Decision,
        *,
        text_forwarded: bool,
    ) -> tuple[JSONObject | None, list[JSONObject]]:
        """The answer to deliver without the blocked calls (rewritten, or the others kept), or
        ``None`` and the hidden pair to re-ask with."""
        if self.config.strategy == "rewrite":
            response = self._rewrite(ex, response, blocked, rejections, decision)
            if not rejections:
                return response, []
        calls = ex.dialect.tool_calls(response)
        allowed = [call.id for call in calls if call.id not in rejections]
        if allowed:
            withheld = ex.dialect.calls_only(ex.dialect.without_calls(response, allowed))
            self._hide(ex, decision, ex.dialect.hidden_items(withheld, rejections))
            return ex.dialect.without_calls(response, rejections), []
        shown = response
        if text_forwarded:
            shown = ex.dialect.calls_only(response)  # its text already reached the harness
        pair = ex.dialect.hidden_items(shown, rejections)
        self._hide(ex, decision, pair)
        return None, pair

    def _withhold_text(
        self,
        ex: Exchange,
        response: JSONObject,
        blocked: Sequence[CallVerdict],
        rejections: dict[str, str],
        decision: Decision,
    ) -> tuple[JSONObject | None, list[JSONObject]]:
        """Text mode's :meth:`_withhold_calls`: the answer with its action rewritten (whose
        original goes back in later requests), or ``None`` and the hidden pair of the answer
        and its rejection as the observation."""
        message = "\n".join(dict.fromkeys(rejections.values()))
        if self.config.strategy == "rewrite":
            done = rewritten(ex, response, blocked[0].call.id, message)
            if done is not None:
                decision.hidden.append(done[1])
                return done[0], []
        pair = observed_items(ex, response, message)
        self._hide(ex, decision, pair)
        return None, pair

    def _rewrite(
        self,
        ex: Exchange,
        response: JSONObject,
        blocked: Sequence[CallVerdict],
        rejections: dict[str, str],
        decision: Decision,
    ) -> JSONObject:
        """Replace what the harness plugin can rewrite; drop those from ``rejections``."""
        plugin = self.firewall.registry.harness(ex.harness)
        replacements: dict[str, ToolCall] = {}
        for verdict in blocked:
            rewritten = plugin.rewrite(
                verdict.call, rejections[verdict.call.id], offered=ex.info.tool_names
            )
            if rewritten is not None:
                call_id = verdict.call.id
                replacements[call_id] = ToolCall(call_id, rewritten.name, rewritten.arguments)
        if not replacements:
            return response
        response, originals = ex.dialect.rewrite_calls(response, replacements)
        for call_id, original in originals.items():
            rejections.pop(call_id, None)
            decision.hidden.append(
                HiddenEntry(
                    ex.dialect.name, "restore", ex.plan.at, ex.plan.anchor, (original,), call_id
                )
            )
        return response

    def _hide(self, ex: Exchange, decision: Decision, items: list[JSONObject]) -> None:
        decision.hidden.append(
            HiddenEntry(ex.dialect.name, "pair", ex.plan.at, ex.plan.anchor, tuple(items))
        )

    async def _reask(self, ex: Exchange, body: JSONObject, decision: Decision) -> Attempt:
        request = non_stream(body)
        attempt = Attempt(kind="reask", request=request)
        decision.attempts.append(attempt)
        try:
            response, _ = await self.upstream.complete(
                ex.upstream_url, ex.upstream_headers, ex.wire(request)
            )
        except UpstreamStatus as refused:
            snippet = refused.content[:300].decode("utf-8", "replace")
            error = UpstreamError(
                502, "upstream_error", f"upstream refused a re-ask ({refused.status}): {snippet}"
            )
            attempt.fail("error", error.message)
            raise ExchangeFailed(error, decision.attempts) from None
        except UpstreamError as error:
            attempt.fail("error", error.message)
            raise ExchangeFailed(error, decision.attempts) from None
        attempt.finish(ex.answer(response, request))
        return attempt


def _with_text(verdict: CallVerdict, spoken: tuple[Finding, ...]) -> CallVerdict:
    """``verdict`` with the turn's text findings, as findings on its call."""
    call = verdict.call
    own = tuple(replace(f, tool_call_id=call.id, tool=call.name) for f in spoken)
    return replace(verdict, findings=verdict.findings + own)


def _deliver(decision: Decision, attempt: Attempt, delivered: JSONObject) -> Decision:
    attempt.delivered = delivered
    decision.delivered = delivered
    return decision


def _exhausted_text(attempts: int, messages: Any) -> str:
    reasons = "\n".join(dict.fromkeys(messages))
    return (
        f"safeagents blocked every tool call of {attempts} consecutive answer(s); "
        f"the run ends here.\n\n{reasons}"
    )
