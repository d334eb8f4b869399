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


def test_a_sibling_folder_with_the_same_prefix_is_not_the_run(tmp_path: Path) -> None:
    committed = figures_from(run(tmp_path, "exact1", 1.0, (10, 20, 40, 80, 160)))
    fresh = run(tmp_path, "exact", 1.0, (15, 30, 45, 60))
    assert abs(check(committed, fresh, p99_target=5.0).error) < 0.05
    with pytest.raises(ValueError, match="must not come from the run"):
        check(committed, tmp_path / "exact1" / "results.json", p99_target=5.0)


def _broken(folder: Path, how: str) -> Path:
    """A one-level run of three good records, then broken as `how` says."""
    import json

    write_results(folder, {1: [record(1, i, o, 1 + 0.1 * o) for i, o in enumerate((10, 20, 30))]})
    data = json.loads((folder / "results.json").read_text())
    recs = data["runs"][0]["records"]
    for r in recs:
        if how == "allfail":
            r["success"] = False
        elif how == "noapprox":
            del r["approx_tokens"]
        elif how in ("zerolat", "nanlat", "strlat"):
            r["latency"] = {"zerolat": 0.0, "nanlat": float("nan"), "strlat": "fast"}[how]
    if how == "recstr":
        data["runs"][0]["records"] = ["a", "b", "c"]
    if how == "hoststr":
        data["meta"]["host"] = "x86"
    (folder / "results.json").write_text(json.dumps(data))
    return folder


@pytest.mark.parametrize(
    "how", ["allfail", "noapprox", "recstr", "zerolat", "nanlat", "strlat", "hoststr"]
)
def test_a_malformed_run_is_a_one_line_error(
    tmp_path: Path, how: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from dragoman.cli import main

    good = run(tmp_path, "committed", 1.0, (10, 20, 40, 80, 160))
    bad = _broken(tmp_path / how, how)
    for args in (["--results", str(good), "--check", str(bad)], ["--results", str(bad)]):
        assert main(["plan", *args, "--p99", "5"]) == 2, args
        err = capsys.readouterr().err
        assert err.startswith("dragoman: error: ") and err.count("\n") == 1, err
