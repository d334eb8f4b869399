"""A model pod's size comes from measured figures: the bench's CPUs and load time, the peak
memory sampled beside it; explicit values win; no figures is a clear error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dragoman.deploy.k8s.sizing import MEMORY_MARGIN, measured_size, round_memory
from dragoman.errors import ConfigError
from tests.plan.conftest import record, write_results

REPO_RESULTS = Path(__file__).resolve().parents[3] / "benchmarks" / "results"


def bench_with_footprint(root: Path, peak: float) -> Path:
    recs = [record(4, i, out, 1 + 0.1 * out) for i, out in enumerate((10, 20, 30))]
    folder = write_results(root / "run", {4: recs})
    (folder / "footprint.json").write_text(json.dumps({"peak_rss_mib": peak}))
    return folder


def test_round_memory_adds_the_margin_in_whole_steps() -> None:
    assert round_memory(1000) == 1280  # 1250 -> the next 256 MiB
    assert round_memory(1024) == 1280
    assert round_memory(1024.1) == 1536


def test_size_from_the_bench_and_its_footprint(tmp_path: Path) -> None:
    bench_with_footprint(tmp_path, peak=6000.0)
    size = measured_size(tmp_path, "avx512-bf16")
    assert (size.cpu, size.start_seconds) == (2.0, 31.5)
    assert size.memory_mib == round_memory(6000.0) >= 6000 * MEMORY_MARGIN
    assert size.source.endswith("run")
    explicit = measured_size(tmp_path, "avx512-bf16", cpu=4.0, memory_mib=512)
    assert (explicit.cpu, explicit.memory_mib, explicit.start_seconds) == (4.0, 512, 31.5)


def test_no_figures_for_the_host_class_is_a_clear_error(tmp_path: Path) -> None:
    bench_with_footprint(tmp_path, peak=6000.0)
    with pytest.raises(ConfigError, match="no measured footprint for host class 'avx2'"):
        measured_size(tmp_path, "avx2")
    assert measured_size(tmp_path, "avx2", 2.0, 1024, 30.0).source == "set explicitly"


def test_the_committed_figures_size_a_pod_for_this_projects_host() -> None:
    size = measured_size(REPO_RESULTS, "avx512-bf16")
    footprint = json.loads((Path(size.source) / "footprint.json").read_text())
    assert size.memory_mib >= footprint["peak_rss_mib"]
    assert size.cpu == 2.0 and 10 < size.start_seconds < 300


@pytest.mark.parametrize(
    "footprint",
    ['{"peak_rss_mib": 69', "{}", '"6990"', '{"peak_rss_mib": NaN}', '{"peak_rss_mib": -5}'],
)
def test_a_corrupt_footprint_is_a_one_line_error(tmp_path: Path, footprint: str) -> None:
    folder = bench_with_footprint(tmp_path, peak=6000.0)
    (folder / "footprint.json").write_text(footprint)
    with pytest.raises(ConfigError, match=r"footprint\.json: .*give --memory-mib"):
        measured_size(tmp_path, "avx512-bf16")
    assert measured_size(tmp_path, "avx512-bf16", memory_mib=1024).memory_mib == 1024


def test_the_newest_run_is_used_by_its_recorded_time_not_its_name(tmp_path: Path) -> None:
    runs = {"z-older": "2026-01-01T00:00:00+00:00", "a-newer": "2026-01-02T00:00:00+00:00"}
    for name, started in runs.items():
        folder = bench_with_footprint(tmp_path / "tmp", peak=6000.0).rename(tmp_path / name)
        results = json.loads((folder / "results.json").read_text())
        results["meta"]["started"] = started
        (folder / "results.json").write_text(json.dumps(results))
    assert measured_size(tmp_path, "avx512-bf16").source == str(tmp_path / "a-newer")


def test_without_a_recorded_time_the_newest_file_wins(tmp_path: Path) -> None:
    import os

    first = bench_with_footprint(tmp_path / "x", peak=6000.0).rename(tmp_path / "z-first")
    second = bench_with_footprint(tmp_path / "y", peak=2000.0).rename(tmp_path / "a-second")
    os.utime(first / "results.json", (1_000_000, 1_000_000))
    os.utime(second / "results.json", (2_000_000, 2_000_000))
    assert measured_size(tmp_path, "avx512-bf16").source == str(second)
