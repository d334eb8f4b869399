from __future__ import annotations

import pytest

from dragoman.bench.loadgen import Record
from dragoman.bench.stats import spikiness, summarise


def rec(
    start: float,
    latency: float,
    ok: bool = True,
    out: int = 10,
    queue: float | None = 0.1,
    infer: float | None = 0.5,
) -> Record:
    return Record(
        0,
        ok,
        200 if ok else 503,
        None if ok else "boom",
        start,
        latency,
        20,
        out,
        queue,
        infer,
        "fr",
        20,
    )


def test_summarise_counts_only_successes_in_throughput() -> None:
    records = [rec(0, 1.0), rec(0, 2.0), rec(1.0, 1.0, ok=False)]
    s = summarise(records)
    assert (s.requests, s.ok, s.errors) == (3, 2, 1)
    assert s.duration_s == 2.0
    assert s.rps == 1.0
    assert s.output_tokens_per_s == 10.0
    assert s.latency_p50_s == 1.5


def test_summarise_splits_latency_into_queue_inference_other() -> None:
    s = summarise([rec(0, 1.0, queue=0.25, infer=0.5), rec(0, 1.0, queue=0.25, infer=0.5)])
    assert s.queue_share == pytest.approx(0.25)
    assert s.inference_share == pytest.approx(0.5)
    assert s.other_share == pytest.approx(0.25)


def test_summarise_without_server_timing_leaves_shares_empty() -> None:
    s = summarise([rec(0, 1.0, queue=None, infer=None)])
    assert s.queue_share is None


def test_spikiness_flags_the_seeds_busy_idle_busy_pattern() -> None:
    spiky = spikiness([93, 0, 0, 93, 0, 93, 0, 0] * 10)
    assert spiky.flagged
    assert spiky.idle_share == pytest.approx(0.625)
    steady = spikiness([91, 94, 92, 95, 93] * 10)
    assert not steady.flagged
    assert steady.cv < 0.05
