"""Synthetic bench results whose every number is chosen by hand, so the planner's arithmetic
can be checked on paper."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from dragoman.plan.figures import HostFigures, LevelFit


def level(c: int, alpha: float, beta: float, residuals: tuple[float, ...] = (0.0,)) -> LevelFit:
    return LevelFit(c, alpha, beta, residuals, rps=0.0, p99=0.0, requests=10, mean_out=100.0)


@pytest.fixture
def figures() -> HostFigures:
    """c=1: latency 1 + 0.1 x out; c=4: 2 + 0.2 x out. One output token per word."""
    return HostFigures(
        host_class="avx512-bf16",
        cores=2,
        label="hand-made",
        max_num_seqs=4,
        levels=[level(1, 1.0, 0.1), level(4, 2.0, 0.2)],
        out_per_in={"*": 1 / 1.3},
    )


def record(c: int, i: int, out: int, latency: float, target: str = "fr") -> dict[str, Any]:
    return {
        "index": i,
        "success": True,
        "status": 200,
        "error": None,
        "start": 0.0,
        "latency": latency,
        "input_tokens": 40,
        "output_tokens": out,
        "queue_seconds": 0.0,
        "inference_seconds": latency,
        "target_lang": target,
        "approx_tokens": out * 2,
    }


def write_results(
    folder: Path, levels: dict[int, list[dict[str, Any]]], host_class: str = "avx512-bf16"
) -> Path:
    """A results.json as `dragoman bench` writes it, with the given records per level."""
    runs = []
    for c, recs in levels.items():
        lat = sorted(r["latency"] for r in recs)
        runs.append(
            {
                "architecture": "continuous",
                "mode": "closed",
                "load": f"c={c}",
                "concurrency": c,
                "summary": {"rps": c / (sum(lat) / len(lat)), "latency_p99_s": lat[-1]},
                "records": recs,
                "server_start_s": 31.5,
            }
        )
    host = {
        "cpu_class": host_class.removesuffix("-emulated"),
        "isa_cap": "AVX2" if host_class.endswith("-emulated") else None,
        "usable_cpus": [0, 1],
        "logical_cores": 2,
    }
    meta = {"label": "synthetic", "host": host, "settings": {"max_num_seqs": 16}}
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "results.json").write_text(json.dumps({"meta": meta, "runs": runs}))
    return folder
