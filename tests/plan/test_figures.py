"""Fits from bench results: a latency line per level, output tokens per input token."""

from __future__ import annotations

from pathlib import Path

import pytest

from dragoman.plan.figures import discover, figures_from, fit_line

from .conftest import record, write_results


def test_fit_line_recovers_an_exact_line() -> None:
    assert fit_line([1, 2, 3, 4], [3, 5, 7, 9]) == pytest.approx((1.0, 2.0))
    assert fit_line([5, 5], [1, 3]) == (2.0, 0.0)


def test_figures_recover_each_levels_line_and_ratios(tmp_path: Path) -> None:
    recs = {
        1: [record(1, i, out, 0.5 + 0.05 * out) for i, out in enumerate((10, 20, 40, 80))],
        8: [record(8, i, out, 1.5 + 0.1 * out, "zh") for i, out in enumerate((10, 30, 60, 90))],
    }
    fig = figures_from(write_results(tmp_path / "run", recs))
    one, eight = fig.levels
    assert (one.alpha, one.beta) == (pytest.approx(0.5), pytest.approx(0.05))
    assert (eight.alpha, eight.beta) == (pytest.approx(1.5), pytest.approx(0.1))
    assert max(abs(r) for r in eight.residuals) < 1e-9
    assert fig.out_per_in == {"fr": 0.5, "zh": 0.5, "*": 0.5}  # approx_tokens = 2 x out
    assert (fig.host_class, fig.cores, fig.start_seconds) == ("avx512-bf16", 2, 31.5)


def test_discover_keeps_one_run_per_host_class_and_skips_others(tmp_path: Path) -> None:
    recs = [record(1, i, out, 1 + 0.1 * out) for i, out in enumerate((10, 20, 30))]
    write_results(tmp_path / "a", {1: recs})
    write_results(tmp_path / "b", {1: recs, 4: recs})
    write_results(tmp_path / "c", {1: recs}, host_class="avx2-emulated")
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "results.json").write_text('{"meta": {}, "runs": []}')  # no host
    found = discover(tmp_path)
    assert set(found) == {"avx512-bf16", "avx2-emulated"}
    assert len(found["avx512-bf16"].levels) == 2
    assert discover(tmp_path, max_num_seqs=8) == {}
