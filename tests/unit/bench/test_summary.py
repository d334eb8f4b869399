"""The per-host summaries (benchmarks/results/SUMMARY-*.md) are what the committed results say:
regenerated here, they equal the committed pages; a result file that lacks a figure's field, or
names another host, stops the summary instead of giving a wrong row."""

from __future__ import annotations

import copy
import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest

from dragoman.bench import summary
from dragoman.bench._summary_studies import FigureError, Source

ROOT = Path(__file__).resolve().parents[3]
RESULTS = ROOT / "benchmarks" / "results"
SCRIPT = ROOT / "benchmarks" / "summary.py"
HOST = {"cpu_model": "AMD EPYC", "cpu_class": "avx512-bf16", "isa_cap": None}
MACHINE = "AMD EPYC (avx512-bf16), 2 cores / 2 threads, 24 GiB"


def level(arch: str, clients: int, tok: float, p99: float = 20.0) -> dict[str, Any]:
    summary_ = {"output_tokens_per_s": tok, "latency_p50_s": 5.0, "latency_p99_s": p99}
    return {"architecture": arch, "mode": "closed", "concurrency": clients, "summary": summary_}


def architectures_run() -> dict[str, Any]:
    return {
        "meta": {"machine": MACHINE, "host": dict(HOST)},
        "runs": [
            level("continuous", 16, 100.0, 20.0),
            level("vllm-serve", 16, 80.0, 25.0),
            level("multiprocess", 16, 10.0),
        ],
    }


def write(root: Path, path: str, doc: Any) -> Source:
    (root / path).parent.mkdir(parents=True, exist_ok=True)
    (root / path).write_text(json.dumps(doc), encoding="utf-8")
    return Source("architectures", path)


def test_committed_summaries_are_the_results_regenerated() -> None:
    pages = summary.summaries(RESULTS)
    assert {"avx512bf16", "amxbf16", "avx2"} <= set(pages)
    stale = summary.stale(RESULTS, pages)
    assert stale == [], (
        f"{stale} differ from the committed results (or name a host class no longer "
        f"summarised): regenerate with `{summary.REGENERATE}` and commit them"
    )


def test_the_script_checks_the_committed_pages() -> None:
    spec = importlib.util.spec_from_file_location("benchmarks_summary", SCRIPT)
    assert spec is not None and spec.loader is not None
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    assert script.RESULTS == RESULTS
    assert summary.main(["--check"], script.RESULTS) == 0


def test_figures_are_computed_from_the_file(tmp_path: Path) -> None:
    source = write(tmp_path, "avx512bf16-2core-variable/results.json", architectures_run())
    page = summary.summaries(tmp_path, (source,))["avx512bf16"]
    link = "[avx512bf16-2core-variable/results.json](avx512bf16-2core-variable/results.json)"
    assert f"| 100.0 tok/s | 1.25x (80.0 tok/s) | {link} | {MACHINE} |" in page
    assert f"| 100.0 tok/s | 10.00x (10.0 tok/s) | {link} | {MACHINE} |" in page
    assert "| 20.00 s | 0.80x (25.00 s) |" in page
    # A baseline the run left out gives no row; nothing is made up for it.
    assert "continuous-legacy" not in page and "static-batch" not in page


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d["runs"][0]["summary"].pop("output_tokens_per_s"), "output_tokens_per_s"),
        (lambda d: d["runs"][1]["summary"].update(latency_p99_s=None), "latency_p99_s is None"),
        (lambda d: d["runs"].pop(0), "no `continuous` level at 16 clients"),
        (lambda d: d.pop("meta"), "no host metadata"),
        (lambda d: d["meta"]["host"].update(cpu_class="avx2"), "not the avx512bf16"),
    ],
    ids=["field missing", "field null", "subject missing", "no host", "another host"],
)
def test_a_run_missing_what_a_figure_needs_stops_the_summary(
    tmp_path: Path, change: Any, message: str
) -> None:
    doc = architectures_run()
    change(doc)
    source = write(tmp_path, "avx512bf16-2core-variable/results.json", doc)
    with pytest.raises(FigureError) as e:
        summary.summaries(tmp_path, (source,))
    assert str(e.value).startswith("avx512bf16-2core-variable/results.json: ")
    assert message in str(e.value)


def test_each_study_kind_fails_on_a_file_missing_its_field(tmp_path: Path) -> None:
    """Every committed source, with the first field its extractor reads taken out."""
    for source in summary.SOURCES:
        doc = json.loads((RESULTS / source.path).read_text(encoding="utf-8"))
        broken = copy.deepcopy(doc)
        for key in ("runs", "rounds", "overload", "patterns", "parallel", "summary"):
            if key in broken:
                del broken[key]
                break
        else:
            pytest.fail(f"{source.path}: no field this test knows to take out")
        path = tmp_path / source.path
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(broken), encoding="utf-8")
        if source.against:
            (tmp_path / source.against).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / source.against).write_text(
                (RESULTS / source.against).read_text(encoding="utf-8"), encoding="utf-8"
            )
        with pytest.raises(FigureError) as e:
            summary.rows(source, tmp_path)
        assert str(e.value).startswith(f"{source.path}: no "), str(e.value)


def test_stale_names_pages_that_differ_and_pages_of_no_class(tmp_path: Path) -> None:
    pages = {"avx2": "# a page\n"}
    (tmp_path / "SUMMARY-avx2.md").write_text("# an old page\n", encoding="utf-8")
    (tmp_path / "SUMMARY-gone.md").write_text("# no longer summarised\n", encoding="utf-8")
    assert summary.stale(tmp_path, pages) == ["SUMMARY-avx2.md", "SUMMARY-gone.md"]
    (tmp_path / "SUMMARY-avx2.md").write_text(pages["avx2"], encoding="utf-8")
    assert summary.stale(tmp_path, pages) == ["SUMMARY-gone.md"]


def test_folder_names_give_the_host_class() -> None:
    assert summary.host_class("engine-choice-avx2-imitated-2core/results.json") == "avx2-imitated"
    assert summary.host_class("avx2-emulated-2core-variable/results.json") == "avx2-emulated"
    assert summary.host_class("cache-hit-avx2-2core/hit-ab.json") == "avx2"
    with pytest.raises(FigureError, match="names no host class"):
        summary.host_class("proxy-cpu-2core/proxy.json")
