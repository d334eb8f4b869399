"""Properties of the simulated day: seeded, monotone in replicas, faithful to its rate."""

from __future__ import annotations

import math

import pytest

from dragoman.plan.figures import HostFigures
from dragoman.plan.model import mix_from_specs
from dragoman.plan.simulate import Day, simulate_day

MIX = mix_from_specs("10:0.5,40:0.5", "en-fr")  # 7.7 and 30.8 output tokens


def test_the_same_seed_gives_the_same_day(figures: HostFigures) -> None:
    day = Day(peak_rps=1.0, hours=2, bursts=2)
    a = simulate_day(figures, MIX, day, replicas=1, admission_limit=8, seed=3)
    b = simulate_day(figures, MIX, day, replicas=1, admission_limit=8, seed=3)
    c = simulate_day(figures, MIX, day, replicas=1, admission_limit=8, seed=4)
    assert a == b
    assert a.hours != c.hours


def test_more_replicas_reject_less_and_answer_faster(figures: HostFigures) -> None:
    # Peak 1 req/s against replicas of about 4 / (2 + 0.2 x 19) = 0.69 req/s each at best.
    day = Day(peak_rps=1.0, hours=3, trough=0.8, peak_hour=1.5)
    results = [
        simulate_day(figures, MIX, day, replicas=n, admission_limit=8, seed=0) for n in (1, 2, 4)
    ]
    shares = [r.rejected_share for r in results]
    assert shares[0] > 0.1  # one replica is overloaded: the test can tell the difference
    assert shares[0] > shares[1] >= shares[2]
    assert shares[2] < 0.01
    assert results[2].p99 < results[0].p99
    assert len({r.arrivals for r in results}) == 1  # the same arrivals every time


def test_arrivals_follow_the_rate(figures: HostFigures) -> None:
    flat = Day(peak_rps=2.0, hours=2, trough=1.0, bursts=0)
    r = simulate_day(figures, MIX, flat, replicas=8, admission_limit=8, seed=1)
    assert r.arrivals == pytest.approx(2.0 * 7200, rel=0.05)
    day = Day(peak_rps=2.0, hours=24, trough=0.25, bursts=0, peak_hour=14)
    assert day.base(14 * 3600) == pytest.approx(2.0)
    assert day.base(2 * 3600) == pytest.approx(0.5)


def test_bursts_raise_the_rate_for_their_length(figures: HostFigures) -> None:
    calm = Day(peak_rps=1.0, hours=1, trough=1.0, bursts=0)
    bursty = Day(peak_rps=1.0, hours=1, trough=1.0, bursts=5, burst_factor=3.0, burst_seconds=300)
    a = simulate_day(figures, MIX, calm, replicas=8, admission_limit=8, seed=2)
    b = simulate_day(figures, MIX, bursty, replicas=8, admission_limit=8, seed=2)
    assert len(b.bursts) == 5
    assert b.arrivals > a.arrivals * 1.3


def test_admitted_latency_is_bounded_by_the_admission_bound(figures: HostFigures) -> None:
    # 8 places: at most 4 running + 4 waiting, so a text waits at most one batch behind.
    day = Day(peak_rps=3.0, hours=1, trough=1.0, bursts=0)
    r = simulate_day(figures, MIX, day, replicas=1, admission_limit=8, seed=0)
    longest_one = 2.0 + 0.2 * 40 / 1.3 * 1.3  # alpha(4) + beta(4) x the longest output
    assert r.rejected_share > 0.5
    assert r.p99 <= 2 * longest_one + 1e-9
    assert not math.isnan(r.hours[0].p99)
