"""The default's targets against the host's peers, each made to fail."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from dragoman.bench.default_targets import default_verdicts
from tests.unit.bench.test_report import run


def _results(**changes: tuple[float, float, float]) -> dict[str, Any]:
    """continuous, llama-server and vllm-serve at 1 and 16 clients; `changes` sets
    (p50, output tok/s, rps) or (p99, -, rps) of `<arch>_<c>`."""
    runs = []
    base = {
        "continuous_1": (2.0, 30.0, 0.4),
        "llama-server_1": (3.0, 20.0, 0.3),
        "continuous_16": (10.0, 100.0, 1.5),
        "llama-server_16": (80.0, 18.0, 0.3),
        "vllm-serve_16": (12.0, 95.0, 1.4),
    }
    base.update(changes)
    for key, (latency, tok, rps) in base.items():
        arch, _, c = key.rpartition("_")
        r = copy.deepcopy(run(arch, int(c), rps))
        summary: dict[str, Any] = r["summary"]  # type: ignore[assignment]
        summary.update(output_tokens_per_s=tok, latency_p50_s=latency, latency_p99_s=latency)
        runs.append(r)
    return {"meta": {}, "runs": runs}


def _line(results: dict[str, Any], start: str) -> str:
    got = [v for v in default_verdicts(results) if v.startswith(start)]
    assert len(got) == 1, got
    return got[0]


def test_every_target_is_met_on_a_run_that_meets_them() -> None:
    lines = default_verdicts(_results())
    assert len(lines) == 3
    assert all(v.endswith(": MET") for v in lines), lines


@pytest.mark.parametrize(
    "one_client",
    [
        (2.8, 30.0, 0.4),  # p50 0.93x: not soon enough
        (2.0, 21.0, 0.4),  # 1.05x the tokens: not enough
    ],
)
def test_one_client_fails_on_latency_or_tokens(one_client: tuple[float, float, float]) -> None:
    line = _line(_results(continuous_1=one_client), "default vs llama.cpp built for this host")
    assert line.endswith("MISSED")


def test_one_client_passes_at_the_bounds() -> None:
    line = _line(_results(continuous_1=(2.7, 22.0, 0.4)), "default vs llama.cpp built")
    assert "0.90x" in line and "1.10x" in line and line.endswith(": MET")


@pytest.mark.parametrize(
    "sixteen",
    [
        (10.0, 100.0, 1.3),  # fewer translations a second than vLLM's server
        (13.0, 100.0, 1.5),  # more, but a worse p99
    ],
)
def test_sixteen_clients_fail_against_vllm(sixteen: tuple[float, float, float]) -> None:
    assert _line(_results(continuous_16=sixteen), "default vs vLLM's").endswith("MISSED")


def test_sixteen_clients_fail_against_llama_cpp_on_throughput_only() -> None:
    slower = _results(**{"llama-server_16": (80.0, 18.0, 1.6)})
    assert _line(slower, "default vs llama.cpp at").endswith("MISSED")
    # llama.cpp's p99 is no target: a lower one does not fail the default.
    better_tail = _results(**{"llama-server_16": (5.0, 18.0, 0.3)})
    assert _line(better_tail, "default vs llama.cpp at").endswith(": MET")


def test_a_run_without_a_peer_has_no_verdict_on_it() -> None:
    results = _results()
    results["runs"] = [r for r in results["runs"] if r["architecture"] != "llama-server"]
    lines = default_verdicts(results)
    assert len(lines) == 1 and lines[0].startswith("default vs vLLM's")
