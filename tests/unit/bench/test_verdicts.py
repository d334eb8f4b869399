"""Each target's verdict made to fail, on each side where the target is a band."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from dragoman.bench import guardcost
from dragoman.bench.verdicts import band, spread, verdicts, widest_spread
from tests.unit.bench.test_report import RESULTS, run


def _with(*runs: dict[str, Any], **top: Any) -> dict[str, Any]:
    """RESULTS with `runs` in place of the runs of the same architecture and concurrency."""
    results = copy.deepcopy(RESULTS)
    keys = {(r["architecture"], r["concurrency"]) for r in runs}
    kept = [r for r in results["runs"] if (r["architecture"], r["concurrency"]) not in keys]
    results["runs"] = [*kept, *runs]
    results.update(top)
    return results


def _one(results: dict[str, Any], start: str) -> str:
    got = [v for v in verdicts(results, max_num_seqs=16) if v.startswith(start)]
    assert len(got) == 1, got
    return got[0]


def test_spread_is_the_range_over_the_median_and_needs_two_figures() -> None:
    assert spread([98.0, 100.0, 102.0]) == pytest.approx(0.04)
    assert spread([100.0]) is None
    assert spread([]) is None
    assert widest_spread([[98.0, 100.0, 102.0], [99.0, 100.0]]) == pytest.approx(0.04)
    assert widest_spread([[98.0, 100.0, 102.0], [99.0]]) is None


@pytest.mark.parametrize(
    ("diff", "noise", "word"),
    [
        (0.0, None, "MET"),
        (0.03, 0.01, "MET"),
        (-0.03, 0.01, "MET"),
        (0.031, 0.01, "MISSED"),
        (-0.031, 0.01, "MISSED"),
        (0.373, None, "MISSED"),
        (0.01, 0.05, "UNDECIDED"),
    ],
)
def test_a_band_fails_on_either_side_and_is_undecided_in_noise(
    diff: float, noise: float | None, word: str
) -> None:
    assert band(diff, 0.03, noise) == word


@pytest.mark.parametrize(
    ("noguard_rps", "sign", "word"),
    [
        (3.75, "-1.3%", "MET"),
        (3.5, "+5.7%", "MISSED"),  # the guard faster than no guard: not a cheap guard
        (3.9, "-5.1%", "MISSED"),  # the guard slower than the band allows
    ],
)
def test_the_guard_verdict_fails_on_each_side(noguard_rps: float, sign: str, word: str) -> None:
    results = _with(run("continuous-noguard", 25, noguard_rps))
    got = _one(results, "repetition guard on vs off")
    assert f", {sign} (target within +-3%;" in got
    assert got.endswith(f": {word}")


def test_the_guard_verdict_states_the_noise_and_is_undecided_above_the_margin() -> None:
    # Both at saturation twice (c=16 and c=25): the spread between those levels is the noise.
    quiet = _with(
        run("continuous", 16, 3.68),
        run("continuous-noguard", 16, 3.74),
    )
    got = _one(quiet, "repetition guard on vs off")
    assert "noise 0.5%: the spread between saturated levels (c >= 16) of each" in got
    assert got.endswith(": MET")
    noisy = _with(
        run("continuous", 16, 3.68),
        run("continuous-noguard", 16, 3.3),  # 3.3 vs 3.75 at c=25: 12.8% apart
    )
    got = _one(noisy, "repetition guard on vs off")
    assert "noise 12.8%" in got
    assert got.endswith(": UNDECIDED")


def test_the_committed_guard_figures_miss_the_band() -> None:
    # avx512bf16-2core-variable: 104.3 vs 76.0 output tok/s at c=25 read MET one-sided.
    results = _with(
        run("continuous", 16, 99.9 / 30),
        run("continuous", 25, 104.3 / 30),
        run("continuous-noguard", 16, 83.8 / 30),
        run("continuous-noguard", 25, 76.0 / 30),
    )
    got = _one(results, "repetition guard on vs off")
    assert ", +37.2% (target within +-3%; noise 9.8%" in got
    assert got.endswith(": MISSED")


def test_the_offline_batch_verdict_says_what_it_is_and_fails_below_90_percent() -> None:
    above = _one(
        RESULTS | {"offline": {"requests": 10, "output_tokens_per_s": 70.0}}, "continuous at"
    )
    assert "reaches 159% of the offline batch's" in above
    assert "its drain included; above it: the batch is no ceiling;" in above
    assert above.endswith(": MET")
    below = _one(
        RESULTS | {"offline": {"requests": 10, "output_tokens_per_s": 125.0}}, "continuous at"
    )
    assert "reaches 89% of the offline batch's" in below
    assert "no ceiling" not in below
    assert below.endswith(": MISSED")


def test_the_multiprocess_verdicts_fail() -> None:
    results = _with(run("multiprocess", 25, 1.0), run("multiprocess-2", 25, 1.1))
    got = _one(results, "continuous vs multiprocess at")
    assert got == "continuous vs multiprocess at c=25: 3.70x throughput; target >= 4x: MISSED"
    two = _one(results, "multiprocess with 2 workers")
    assert two.endswith("(target: not better): MISSED")


def test_the_queue_share_verdict_fails() -> None:
    results = _with(run("continuous", 16, 3.0, queue=0.12))
    got = _one(results, "continuous queue share")
    assert "at most 12.0% (c=16; target < 10%): MISSED" in got


@pytest.mark.parametrize(("rps", "p99"), [(3.5, 2.0), (3.7, 2.6)])
def test_the_vllm_serve_verdict_fails_on_throughput_or_p99(rps: float, p99: float) -> None:
    results = _with(run("continuous", 25, rps, p99=p99))
    got = _one(results, "continuous vs vllm serve")
    assert got.endswith("(target >= 100% with p99 no higher): MISSED")


def test_the_5x_verdict_fails_on_a_host_without_native_bf16() -> None:
    results = _with(run("continuous-legacy", 25, 0.75))
    got = _one(results, "host defaults vs the old defaults")
    assert "4.93x output tok/s" in got
    assert got.endswith("target >= 5x: MISSED)")


def _guard(on: list[float], off: list[float]) -> dict[str, Any]:
    med_on, med_off = sorted(on)[1], sorted(off)[1]
    return {
        "rounds": {
            "on": [{"output_tokens_per_s": x} for x in on],
            "off": [{"output_tokens_per_s": x} for x in off],
        },
        "median_output_tokens_per_s": {"on": med_on, "off": med_off},
        "guard_cost": 1 - med_on / med_off,
    }


def test_the_guard_cost_bench_meets_its_band_with_the_committed_rounds() -> None:
    # benchmarks/results/guard-cost-avx512bf16-2core, rounded
    got = guardcost.verdict(_guard([100.5, 98.2, 100.3], [103.4, 101.8, 102.5]))
    assert got == (
        "Guard cost: +2.1% of throughput (target within +-3%; noise 2.3%: the spread between "
        "rounds of each mode): MET"
    )


@pytest.mark.parametrize(
    ("on", "off", "cost"),
    [
        ([95.0, 95.5, 96.0], [100.0, 100.5, 101.0], "+5.0%"),  # the guard costs 5%
        ([105.0, 105.5, 106.0], [100.0, 100.5, 101.0], "-5.0%"),  # the guard "gains" 5%
    ],
)
def test_the_guard_cost_bench_misses_on_each_side(
    on: list[float], off: list[float], cost: str
) -> None:
    got = guardcost.verdict(_guard(on, off))
    assert f"Guard cost: {cost} of throughput (target within +-3%; noise 1.0%" in got
    assert got.endswith(": MISSED")


def test_the_guard_cost_bench_is_undecided_when_its_rounds_spread_wider_than_the_band() -> None:
    got = guardcost.verdict(_guard([96.0, 100.0, 104.0], [99.0, 101.0, 103.0]))
    assert "Guard cost: +1.0% of throughput (target within +-3%; noise 8.0%" in got
    assert got.endswith(": UNDECIDED")
