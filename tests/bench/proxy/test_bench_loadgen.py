"""The proxy benchmark's load generator: percentiles, latency accounting, response parsing."""

from __future__ import annotations

import asyncio
import itertools
import math
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from bench.proxy.loadgen import Target, _consume, _Exchange, closed_loop, open_loop
from bench.proxy.payloads import CALL_MARKER, TOKEN_MARKER, Scenario, request_body
from bench.proxy.stats import Sample, percentile, summarise
from bench.proxy.upstream import UpstreamOptions, serve_upstream


def test_percentiles_interpolate_between_ranks_and_skip_nan() -> None:
    values = [4.0, 1.0, math.nan, 3.0, 2.0]
    assert percentile(values, 0) == 1.0
    assert percentile(values, 50) == 2.5
    assert percentile(values, 100) == 4.0
    assert percentile(values, 99) == pytest.approx(3.97)
    assert math.isnan(percentile([], 50))
    with pytest.raises(ValueError):
        percentile(values, 101)


def test_latency_counts_from_the_intended_send_time_and_errors_are_apart() -> None:
    late = Sample(intended=10.0, sent=10.5, first_byte=10.6, done=10.7)
    assert late.latency == pytest.approx(0.7)  # the 0.5 s it waited to be sent counts
    assert late.ttfb == pytest.approx(0.6)
    samples = [
        late,
        Sample(intended=10.2, sent=10.2, first_byte=10.25, done=10.3),
        Sample(intended=10.4, sent=10.4, done=11.0, error="status 502"),
    ]
    summary = summarise(samples)
    assert (summary.requests, summary.errors, summary.first_error) == (3, 1, "status 502")
    assert summary.rate == pytest.approx(2 / 1.0)  # two good ones over 10.0 .. 11.0
    assert summary.latency["p50"] == pytest.approx(400.0)  # ms, of 100 and 700
    assert summary.latency["max"] == pytest.approx(700.0)
    assert math.isnan(summary.ttft["p50"])


def _chunked(*parts: bytes) -> bytes:
    return b"".join(b"%x\r\n%s\r\n" % (len(p), p) for p in parts) + b"0\r\n\r\n"


def test_chunked_answers_are_complete_only_at_the_last_chunk_and_markers_span_reads() -> None:
    head = b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n"
    body = _chunked(
        b'data: {"content":"Look', b'ing"}\n\n', b'data: {"id":"' + CALL_MARKER + b'0"}'
    )
    wire = head + body
    exchange = _Exchange(keep_body=True)
    finished = []
    for index in range(0, len(wire), 7):  # seven-byte reads split everything
        finished.append(_consume(exchange, wire[index : index + 7], float(index)))
    assert finished[-1] and not any(finished[:-1])
    assert exchange.status == 200
    assert exchange.body.startswith(b'data: {"content":"Looking"}')
    token_at, call_at = exchange.marks
    assert 0 < token_at < call_at < len(wire)
    assert TOKEN_MARKER in exchange.body and CALL_MARKER in exchange.body


def test_content_length_answers_end_at_their_length() -> None:
    exchange = _Exchange(keep_body=False)
    assert not _consume(exchange, b"HTTP/1.1 404 Not Found\r\ncontent-length: 4\r\n\r\nab", 1.0)
    assert _consume(exchange, b"cd", 2.0)
    assert exchange.status == 404 and exchange.body == b""


def test_closed_and_open_loop_against_the_scripted_upstream() -> None:
    async def run() -> None:
        server = await serve_upstream("127.0.0.1", 0, UpstreamOptions())
        port = server.sockets[0].getsockname()[1]
        target = Target("127.0.0.1", port, expect=(CALL_MARKER,))
        streams = [request_body(Scenario("100"), stream=True, user=u) for u in range(2)]
        try:
            closed = await closed_loop(target, streams, concurrency=2, duration=0.2)
            opened = await open_loop(
                target, [request_body(Scenario("10k"), stream=False)], rate=200, duration=0.3
            )
        finally:
            server.close()
            await server.wait_closed()
        assert closed and all(s.error is None for s in closed)
        assert all(s.ttfb <= s.ttft <= s.ttfc <= s.latency for s in closed)
        assert 50 <= len(opened) <= 61 and all(s.error is None for s in opened)
        intended = sorted(s.intended for s in opened)
        gaps = [b - a for a, b in itertools.pairwise(intended)]
        assert all(gap == pytest.approx(1 / 200) for gap in gaps)

    asyncio.run(run())
