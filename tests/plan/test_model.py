"""The capacity model on a case small enough to check by hand."""

from __future__ import annotations

import math

import pytest

from dragoman.plan.figures import HostFigures
from dragoman.plan.model import (
    Mix,
    capacity_at,
    mix_from_specs,
    plan_size,
    predict,
    replica_capacity,
    weighted_quantile,
)

# 100 words = 130 tokens in, x 1/1.3 = 100 tokens out.
MIX = Mix(words=((100.0, 1.0),), pairs=(("en-fr", 1.0),))


def test_levels_by_hand(figures: HostFigures) -> None:
    one, four = predict(figures, MIX)
    # c=1: 1 + 0.1 x 100 = 11 s a request, 1/11 req/s; c=4: 2 + 0.2 x 100 = 22 s, 4/22 req/s.
    assert one.mean_latency == pytest.approx(11.0) and one.rps == pytest.approx(1 / 11)
    assert four.mean_latency == pytest.approx(22.0) and four.rps == pytest.approx(4 / 22)
    assert (one.p99, four.p99) == (pytest.approx(11.0), pytest.approx(22.0))


def test_capacity_interpolates_between_levels_by_hand(figures: HostFigures) -> None:
    # 16.5 s is halfway from 11 to 22 s: halfway from 1/11 to 4/22 req/s, at 2.5 clients.
    cap = replica_capacity(figures, MIX, 16.5)
    assert cap.rps == pytest.approx((1 / 11 + 4 / 22) / 2)
    assert cap.concurrency == pytest.approx(2.5)
    assert not cap.capped


def test_replicas_by_hand(figures: HostFigures) -> None:
    # 1 req/s at 80% of 0.13636 req/s a replica: 1 / 0.10909 = 9.17 -> 10 replicas.
    plan = plan_size(figures, MIX, rps=1.0, p99_target=16.5, headroom=0.8)
    assert plan.replicas == 10
    assert plan_size(figures, MIX, rps=1.0, p99_target=16.5, headroom=1.0).replicas == 8


def test_capacity_never_extrapolates_past_the_highest_level(figures: HostFigures) -> None:
    cap = replica_capacity(figures, MIX, 100.0)
    assert cap.rps == pytest.approx(4 / 22) and cap.capped


def test_a_target_below_every_level_needs_a_faster_host(figures: HostFigures) -> None:
    assert replica_capacity(figures, MIX, 5.0).rps == 0.0
    assert plan_size(figures, MIX, rps=1.0, p99_target=5.0, headroom=0.8).replicas == 0


def test_longer_texts_and_wordier_targets_cost_more(figures: HostFigures) -> None:
    figures.out_per_in["zh"] = 0.5 / 1.3  # half the output tokens of the rest
    short = replica_capacity(figures, mix_from_specs("50", "en-fr"), 16.5)
    long = replica_capacity(figures, mix_from_specs("100", "en-fr"), 16.5)
    zh = replica_capacity(figures, mix_from_specs("100", "en-zh"), 16.5)
    assert short.rps > long.rps
    assert zh.rps == pytest.approx(short.rps)


def test_p99_counts_the_residuals_of_the_fit(figures: HostFigures) -> None:
    from dataclasses import replace

    noisy = replace(figures.levels[0], residuals=tuple([0.0] * 98 + [5.0, 5.0]))
    figures.levels[0] = noisy
    (one, _) = predict(figures, MIX)
    assert one.p99 == pytest.approx(16.0)  # 11 s + the 2% of residuals at 5 s
    assert one.mean_latency == pytest.approx(11.0)


def test_capacity_takes_the_best_point_under_a_noisy_curve() -> None:
    # p99 not monotonic in clients (a noisy level): the best point under the target counts.
    cap = capacity_at([(1, 10.0, 1.0), (8, 19.0, 3.0), (16, 17.0, 4.0)], 18.0)
    assert cap.rps == pytest.approx(4.0) and cap.capped
    assert capacity_at([], 18.0).rps == 0.0


def test_weighted_quantile() -> None:
    assert weighted_quantile([(1.0, 0.5), (2.0, 0.49), (3.0, 0.01)], 0.99) == 2.0
    assert weighted_quantile([(1.0, 0.5), (2.0, 0.48), (3.0, 0.02)], 0.99) == 3.0


@pytest.mark.parametrize(
    ("words", "pairs", "message"),
    [
        ("", "en-fr", "words: empty"),
        ("ten", "en-fr", "number of words"),
        ("10", "en-fr:-1", "positive"),
    ],
)
def test_bad_mix_specs_say_what_is_wrong(words: str, pairs: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        mix_from_specs(words, pairs)


def test_mix_weights_are_normalised(figures: HostFigures) -> None:
    outs = mix_from_specs("10:3,100:1", "en-fr:1,en-de:1").outputs(figures)
    assert math.fsum(p for _, p in outs) == pytest.approx(1.0)
    assert len(outs) == 4


def test_the_line_is_held_at_the_measured_ends_not_extrapolated() -> None:
    from dragoman.plan.figures import fit_level
    from dragoman.plan.model import outside_measured

    from .conftest import record

    # A steep line through 50-150 output tokens: extended down to 1 token it went below 0 s.
    recs = [
        record(1, i, out, lat) for i, (out, lat) in enumerate([(50, 6.0), (100, 11.0), (150, 16.5)])
    ]
    level = fit_level(1, recs, {"rps": 0.1, "latency_p99_s": 16.5})
    assert level.alpha + level.beta * 1 < 1.0  # what the line alone says of 1 token
    assert level.latency(1) == pytest.approx(level.latency(50))
    assert level.latency(1) >= 6.0
    assert level.latency(1000) == pytest.approx(level.latency(150))
    fig = HostFigures("avx2", 2, "x", 16, [level], {"*": 1 / 1.3})
    (tiny,) = predict(fig, mix_from_specs("1", "en-fr"))
    assert tiny.mean_latency >= 6.0 and tiny.rps <= 1 / 6.0
    warning = outside_measured(fig, mix_from_specs("1", "en-fr"))
    assert warning is not None and "outside the 50-150" in warning
    assert outside_measured(fig, mix_from_specs("100", "en-fr")) is None


@pytest.mark.parametrize(
    "words, pairs, message",
    [
        ("6:nan", "en-fr", "finite positive weight"),
        ("6:inf", "en-fr", "finite positive weight"),
        ("nan:1", "en-fr", "finite number of words"),
        ("-50:1", "en-fr", "finite number of words"),
        ("inf", "en-fr", "finite number of words"),
        ("6", "en-fr:nan", "finite positive weight"),
        ("6", "en-zz", "two different codes"),
        ("6", "en-fr-zh", "two different codes"),
        ("6", "en-en", "two different codes"),
        ("6", ",", "pairs: empty"),
    ],
)
def test_mix_values_are_finite_positive_and_known(words: str, pairs: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        mix_from_specs(words, pairs)


def test_pairs_are_read_in_lower_case() -> None:
    assert mix_from_specs("6", "EN-FR:2, en-De").pairs == (("en-fr", 2.0), ("en-de", 1.0))
