from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from dragoman.bench import report
from dragoman.bench.verdicts import verdicts


def run(arch: str, c: int, rps: float, p99: float = 2.0, queue: float = 0.01) -> dict[str, object]:
    return {
        "architecture": arch,
        "mode": "closed",
        "load": f"c={c}",
        "concurrency": c,
        "summary": {
            "requests": 10,
            "ok": 10,
            "errors": 0,
            "duration_s": 5.0,
            "rps": rps,
            "output_tokens_per_s": rps * 30,
            "latency_p50_s": 1.0,
            "latency_p95_s": 1.5,
            "latency_p99_s": p99,
            "latency_mean_s": 1.1,
            "queue_share": queue,
            "inference_share": 0.9,
            "other_share": 0.09,
        },
        "utilisation": {
            "series": "process_cpu",
            "mean": 80.0,
            "cv": 0.1,
            "idle_share": 0.0,
            "flagged": False,
        },
        "timeline": {"series": "process_cpu", "t": [0.1, 0.2, 0.3], "value": [80, 85, 79]},
    }


RESULTS: dict[str, Any] = {
    "meta": {"label": "test", "workload": "variable", "seed": 0, "host": {"native_bf16": False}},
    "offline": {"requests": 10, "seconds": 2.5, "rps": 4.0, "output_tokens_per_s": 118.0},
    "runs": [
        run("continuous", 1, 0.6),
        run("continuous", 25, 3.7, queue=0.5),
        run("continuous-noguard", 25, 3.75),
        run("continuous-legacy", 25, 0.5),
        run("multiprocess", 1, 0.5),
        run("multiprocess", 25, 0.6),
        run("multiprocess-2", 1, 0.5),
        run("multiprocess-2", 25, 0.55),
        run("vllm-serve", 1, 0.6),
        run("vllm-serve", 25, 3.6, p99=2.5),
    ],
}


def test_verdicts_check_each_target_against_the_same_run() -> None:
    v = verdicts(RESULTS, max_num_seqs=16)
    assert "continuous vs multiprocess at c=25: 6.17x throughput; target >= 4x: MET" in v
    assert any(x.startswith("multiprocess with 2 workers") and x.endswith("MET") for x in v)
    assert any("queue share" in x and "at most 1.0% (c=1" in x and x.endswith("MET") for x in v)
    assert (
        "continuous vs vllm serve at c=25: 103% of its output tok/s (111.0 vs 108.0), p99 2.00 "
        "vs 2.50 s (target >= 100% with p99 no higher): MET"
    ) in v
    assert (
        "continuous at saturation (c=25) reaches 94% of the offline batch's output tok/s "
        "(111.0 vs 118.0; the batch is 10 prompts at once, its drain included; "
        "target >= 90% of the batch): MET"
    ) in v
    assert (
        "repetition guard on vs off at c=25: 111.0 vs 112.5 output tok/s, -1.3% "
        "(target within +-3%; noise not measured: fewer than two saturated levels "
        "(c >= 16) of each): MET"
    ) in v
    assert any(x.startswith("host defaults vs the old defaults") and "7.40x" in x for x in v)
    assert any("7.40x" in x and x.endswith("target >= 5x: MET)") for x in v)


def test_verdicts_report_a_miss() -> None:
    results = {**RESULTS, "offline": {**RESULTS["offline"], "output_tokens_per_s": 200.0}}
    batch = [x for x in verdicts(results, 16) if "offline batch" in x]
    assert len(batch) == 1
    assert "reaches 56% of the offline batch's" in batch[0]
    assert batch[0].endswith("target >= 90% of the batch): MISSED")


def test_verdicts_skip_the_5x_target_on_a_host_with_native_bf16() -> None:
    results = {**RESULTS, "meta": {**RESULTS["meta"], "host": {"native_bf16": True}}}
    legacy = [x for x in verdicts(results, 16) if x.startswith("host defaults")]
    assert legacy and "applies to hosts without native bf16" in legacy[0]


def test_verdicts_give_another_model_throughput_as_a_ratio_of_the_same_architecture() -> None:
    tier = "continuous@qwen2.5-coder-1.5b-instruct"
    results = {
        **RESULTS,
        "meta": {**RESULTS["meta"], "model": "qwen2.5-coder-0.5b-instruct"},
        "runs": [*RESULTS["runs"], run(tier, 1, 0.3), run(tier, 25, 1.85)],
    }
    v = [x for x in verdicts(results, 16) if x.startswith(tier)]
    assert v == [
        f"{tier} vs continuous (qwen2.5-coder-0.5b-instruct) at c=1: 0.50x output tok/s "
        "(9.0 vs 18.0), 0.50x req/s, p50 1.00 vs 1.00 s",
        f"{tier} vs continuous (qwen2.5-coder-0.5b-instruct) at c=25: 0.50x output tok/s "
        "(55.5 vs 111.0), 0.50x req/s, p50 1.00 vs 1.00 s",
    ]


def test_write_makes_json_markdown_and_plots(tmp_path: Path) -> None:
    results = {**RESULTS, "verdicts": verdicts(RESULTS, 16)}
    paths = report.write(results, tmp_path)
    names = sorted(p.name for p in paths)
    assert names == [
        "latency_vs_concurrency.png",
        "results.json",
        "results.md",
        "throughput_vs_concurrency.png",
        "utilisation_timeline.png",
    ]
    for p in paths:
        assert p.stat().st_size > 0
    assert json.loads((tmp_path / "results.json").read_text())["offline"]["rps"] == 4.0
    md = (tmp_path / "results.md").read_text()
    assert "| continuous | c=25 | 10/10 | 3.70 | 111.0 |" in md
    assert "## Targets" in md


def test_verdicts_compare_with_llama_server_at_1_and_16_clients() -> None:
    results = {
        "meta": {},
        "runs": [
            run("continuous", 1, 0.3),
            run("continuous", 16, 2.0, p99=9.0),
            run("llama-server", 1, 0.6),
            run("llama-server", 16, 1.0, p99=12.0),
            run("continuous-fp32", 16, 1.5, p99=8.0),
        ],
    }
    got = verdicts(results, 16)
    assert any(
        v.startswith("continuous vs llama-server at c=1") and v.endswith("MISSED") for v in got
    )
    assert any(
        v.startswith("continuous vs llama-server at c=16") and v.endswith("MET") for v in got
    )
    # more tok/s than fp32, but a higher p99: missed
    assert any(
        v.startswith("continuous vs continuous-fp32 at c=16") and v.endswith("MISSED") for v in got
    )


def test_verdicts_check_dragoman_on_llama_cpp_and_w8a8_without_continuous() -> None:
    results = {
        "meta": {},
        "runs": [
            run("continuous-w8a8", 1, 0.3),
            run("llama-cpp", 1, 0.7),
            run("llama-cpp", 16, 1.2, p99=11.0),
            run("llama-server", 1, 0.6),
            run("llama-server", 16, 1.0, p99=12.0),
        ],
    }
    got = verdicts(results, 16)
    assert any(
        v.startswith("continuous-w8a8 vs llama-server at c=1") and v.endswith("MISSED") for v in got
    )
    assert any(v.startswith("llama-cpp vs llama-server at c=1") and v.endswith("MET") for v in got)
    assert any(v.startswith("llama-cpp vs llama-server at c=16") and v.endswith("MET") for v in got)


def test_markdown_shows_server_memory_and_answer_length() -> None:
    r = run("llama-server", 1, 0.5)
    r["memory"] = {"largest_rss_mib": 612.3, "tree_rss_mib": 612.3, "tree_pss_mib": 600.0}
    r["records"] = [{"success": True, "output_tokens": 10}, {"success": True, "output_tokens": 20}]
    md = report.markdown({"meta": {}, "runs": [r]})
    assert "| llama-server | c=1 | 612 | 612 | 600 | 15.0 |" in md
