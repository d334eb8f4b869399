"""Per-level statistics from request records and utilisation samples."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import asdict, dataclass

from dragoman.bench.loadgen import Record
from dragoman.stats import percentile


@dataclass
class LevelSummary:
    requests: int
    ok: int
    errors: int
    duration_s: float
    rps: float
    output_tokens_per_s: float
    latency_p50_s: float
    latency_p95_s: float
    latency_p99_s: float
    latency_mean_s: float
    queue_share: float | None  # of mean latency, from server-reported queue time
    inference_share: float | None
    other_share: float | None  # HTTP, serialisation, our own code

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def summarise(records: Sequence[Record]) -> LevelSummary:
    ok = [r for r in records if r.success]
    if records:
        duration = max(r.start + r.latency for r in records) - min(r.start for r in records)
    else:
        duration = 0.0
    lat = [r.latency for r in ok]
    mean_lat = statistics.fmean(lat) if lat else float("nan")
    timed = [r for r in ok if r.queue_seconds is not None and r.inference_seconds is not None]
    q_share = i_share = o_share = None
    if timed:
        total = sum(r.latency for r in timed)
        q_share = sum(r.queue_seconds or 0.0 for r in timed) / total
        i_share = sum(r.inference_seconds or 0.0 for r in timed) / total
        o_share = max(0.0, 1.0 - q_share - i_share)
    return LevelSummary(
        requests=len(records),
        ok=len(ok),
        errors=len(records) - len(ok),
        duration_s=duration,
        rps=len(ok) / duration if duration > 0 else 0.0,
        output_tokens_per_s=sum(r.output_tokens for r in ok) / duration if duration > 0 else 0.0,
        latency_p50_s=percentile(lat, 50),
        latency_p95_s=percentile(lat, 95),
        latency_p99_s=percentile(lat, 99),
        latency_mean_s=mean_lat,
        queue_share=q_share,
        inference_share=i_share,
        other_share=o_share,
    )


@dataclass
class Spikiness:
    mean: float
    cv: float  # coefficient of variation: std / mean
    idle_share: float  # share of samples under 10% of the series' peak
    flagged: bool  # the seed's 93% -> 0% -> 93% pattern: busy peaks with many idle gaps

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def spikiness(values: Sequence[float]) -> Spikiness:
    if len(values) < 2:
        return Spikiness(float("nan"), float("nan"), float("nan"), False)
    mean = statistics.fmean(values)
    peak = max(values)
    cv = statistics.pstdev(values) / mean if mean > 0 else float("nan")
    idle = sum(1 for v in values if v < 0.1 * peak) / len(values) if peak > 0 else 1.0
    return Spikiness(mean, cv, idle, flagged=peak > 0 and idle >= 0.2 and cv >= 0.5)
