"""Per-request timings and their summaries (percentiles by linear interpolation)."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["Sample", "Summary", "percentile", "summarise"]


@dataclass(frozen=True, slots=True)
class Sample:
    """One request; times are ``perf_counter`` seconds, NaN when the event never came."""

    intended: float
    """When the request was due (open loop) or sent (closed loop)."""
    sent: float = math.nan
    first_byte: float = math.nan
    first_token: float = math.nan
    first_call: float = math.nan
    done: float = math.nan
    error: str | None = None

    @property
    def latency(self) -> float:
        return self.done - self.intended

    @property
    def ttfb(self) -> float:
        return self.first_byte - self.intended

    @property
    def ttft(self) -> float:
        return self.first_token - self.intended

    @property
    def ttfc(self) -> float:
        return self.first_call - self.intended


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q``-th percentile (0-100) of ``values``, interpolating between ranks; NaN if empty."""
    if not 0 <= q <= 100:
        raise ValueError(f"percentile must be in [0, 100], got {q}")
    ordered = sorted(v for v in values if not math.isnan(v))
    if not ordered:
        return math.nan
    position = (len(ordered) - 1) * q / 100
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


@dataclass(frozen=True, slots=True)
class Summary:
    """Milliseconds for times, requests per second for ``rate``."""

    requests: int
    errors: int
    rate: float
    latency: dict[str, float]
    ttfb: dict[str, float]
    ttft: dict[str, float]
    ttfc: dict[str, float]
    first_error: str | None

    def to_json(self) -> dict[str, Any]:
        return {
            "requests": self.requests,
            "errors": self.errors,
            "rate": self.rate,
            "latency": self.latency,
            "ttfb": self.ttfb,
            "ttft": self.ttft,
            "ttfc": self.ttfc,
            "first_error": self.first_error,
        }


def _quantiles(values: Iterable[float]) -> dict[str, float]:
    millis = [v * 1000 for v in values if not math.isnan(v)]
    if not millis:
        return {
            "p50": math.nan,
            "p90": math.nan,
            "p99": math.nan,
            "max": math.nan,
            "mean": math.nan,
        }
    return {
        "p50": percentile(millis, 50),
        "p90": percentile(millis, 90),
        "p99": percentile(millis, 99),
        "max": max(millis),
        "mean": sum(millis) / len(millis),
    }


def summarise(samples: Sequence[Sample]) -> Summary:
    """Timings of the successful requests; ``rate`` counts them over the measured span."""
    good = [s for s in samples if s.error is None]
    errors = [s for s in samples if s.error is not None]
    span = 0.0
    if samples:
        span = max(s.done for s in samples) - min(s.intended for s in samples)
    return Summary(
        requests=len(samples),
        errors=len(errors),
        rate=len(good) / span if span > 0 else 0.0,
        latency=_quantiles(s.latency for s in good),
        ttfb=_quantiles(s.ttfb for s in good),
        ttft=_quantiles(s.ttft for s in good),
        ttfc=_quantiles(s.ttfc for s in good),
        first_error=errors[0].error if errors else None,
    )
