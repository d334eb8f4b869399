"""The check against a measured run: same engine, same line, so the prediction is the
measurement; a slower measured engine shows as the error; never from the run itself."""

from __future__ import annotations

from pathlib import Path

import pytest

from dragoman.plan.check import check, measured_run
from dragoman.plan.figures import figures_from

from .conftest import record, write_results


def run(root: Path, name: str, scale: float, outs: tuple[int, ...]) -> Path:
    levels = {
        c: [record(c, i, o, scale * (a + b * o)) for i, o in enumerate(outs)]
        for c, a, b in ((2, 0.5, 0.05), (8, 1.0, 0.1))
    }
    return write_results(root / name, levels)


def test_prediction_matches_a_run_on_the_same_engine(tmp_path: Path) -> None:
    committed = figures_from(run(tmp_path, "committed", 1.0, (10, 20, 40, 80, 160)))
    fresh = run(tmp_path, "fresh", 1.0, (15, 30, 45, 60))  # other texts, same engine
    c = check(committed, fresh, p99_target=5.0)
    assert c.measured.rps > 0
    assert abs(c.error) < 0.05


def test_a_slower_engine_shows_as_the_error(tmp_path: Path) -> None:
    committed = figures_from(run(tmp_path, "committed", 1.0, (10, 20, 40, 80, 160)))
    slower = run(tmp_path, "slower", 1.5, (10, 20, 40, 80, 160))
    assert check(committed, slower, p99_target=100.0).error == pytest.approx(0.5, abs=0.005)


def test_the_mix_is_the_measured_runs_texts(tmp_path: Path) -> None:
    _, mix, levels = measured_run(run(tmp_path, "fresh", 1.0, (15, 30)))
    assert dict(mix.pairs) == {"en-fr": 4}
    assert sorted(w for w, _ in mix.words) == pytest.approx([30 / 1.3, 60 / 1.3], abs=0.05)
    assert [m.concurrency for m in levels] == [2, 8]


def test_figures_from_the_checked_run_are_refused(tmp_path: Path) -> None:
    fresh = run(tmp_path, "fresh", 1.0, (15, 30, 45))
    with pytest.raises(ValueError, match="must not come from the run"):
        check(figures_from(fresh), fresh, p99_target=5.0)
