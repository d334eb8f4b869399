"""`dragoman bench`'s runner without servers: the settings it refuses before anything starts,
the files it writes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from dragoman.bench import report
from dragoman.bench.command import _save
from dragoman.bench.loadgen import Record
from dragoman.bench.monitor import Monitor
from dragoman.bench.runner import Level, level_result
from dragoman.bench.settings import BenchSettings
from dragoman.cli import main
from dragoman.plan.figures import figures_from


@pytest.mark.parametrize("below", ["", "sub"])
def test_out_through_a_file_is_a_one_line_settings_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], below: str
) -> None:
    file = tmp_path / "results"
    file.write_text("not a folder")
    out = file / below if below else file
    assert main(["bench", "--out", str(out), "--no-offline"]) == 2
    err = capsys.readouterr().err
    assert err == f"dragoman: error: --out {out}: {file} is not a folder\n"
    assert file.read_text() == "not a folder"


def _strict(text: str) -> Any:
    def refuse(name: str) -> None:
        raise ValueError(f"{name} is not JSON")

    return json.loads(text, parse_constant=refuse)


def failed(index: int) -> Record:
    return Record(index, False, None, "ConnectError: refused", 0.0, 0.01, 0, 0, None, None, "fr", 3)


def test_a_level_without_answers_or_samples_is_written_as_null(tmp_path: Path) -> None:
    # No successful request: no latency percentiles; no utilisation sample: no spread.
    run = level_result("server", Level("closed", 1), [failed(0), failed(1)], Monitor())
    results = {"meta": {"label": "t"}, "runs": [run], "verdicts": []}
    report.write(results, tmp_path)
    written = _strict((tmp_path / "results.json").read_text())
    summary, util = written["runs"][0]["summary"], written["runs"][0]["utilisation"]
    assert summary["latency_p50_s"] is None and summary["latency_p99_s"] is None
    assert summary["latency_mean_s"] is None
    assert util["mean"] is None and util["cv"] is None
    assert "| server | c=1 | 0/2 | 0.00 | 0.0 | - | - | - |" in report.markdown(written)
    # The planner reads the file and says why the level is of no use, not a TypeError.
    written["meta"]["host"] = {"cpu_class": "avx2", "logical_cores": 2}
    written["runs"][0]["architecture"] = "continuous"
    (tmp_path / "results.json").write_text(json.dumps(written))
    with pytest.raises(ValueError, match="0 successful records"):
        figures_from(tmp_path)


def test_other_bench_files_are_strict_json(tmp_path: Path) -> None:
    # --proxy, --ray, --checks-cost ... (command._save): a ratio of nothing is null too.
    s = BenchSettings(out=tmp_path)
    _save(s, "proxy", {"rows": [{"throughput_ratio": float("nan")}]}, "md", Console(quiet=True))
    assert _strict((tmp_path / "proxy.json").read_text()) == {"rows": [{"throughput_ratio": None}]}
