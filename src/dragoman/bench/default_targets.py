"""The default's targets against the peers built for this host, from one run's own figures.

`continuous` is dragoman as `dragoman serve` runs it here (the host's plan: engine, weights,
dtype, threads). One client: its p50 at most 0.9x that of llama.cpp's server built for this CPU
(`llama-server`) and its output tok/s at least 1.1x. Sixteen clients: completed translations a
second at least those of vLLM's own server with the same plan (`vllm-serve`), with a p99 no
higher, and at least those of `llama-server`.
"""

from __future__ import annotations

from typing import Any

ME = "continuous"
NATIVE = "llama-server"
VLLM = "vllm-serve"
P50_AT_MOST = 0.9
TOK_AT_LEAST = 1.1
CLIENTS = 16


def _level(results: dict[str, Any], arch: str, clients: int) -> dict[str, Any] | None:
    for r in results["runs"]:
        if r["architecture"] == arch and r["mode"] == "closed" and r["concurrency"] == clients:
            summary: dict[str, Any] = r["summary"]
            return summary
    return None


def _met(ok: bool) -> str:
    return "MET" if ok else "MISSED"


def default_verdicts(results: dict[str, Any]) -> list[str]:
    """One line per target the run has both sides of; none for a side it lacks."""
    out: list[str] = []
    mine, theirs = _level(results, ME, 1), _level(results, NATIVE, 1)
    if mine and theirs and theirs["latency_p50_s"] > 0 and theirs["output_tokens_per_s"] > 0:
        p50 = mine["latency_p50_s"] / theirs["latency_p50_s"]
        tok = mine["output_tokens_per_s"] / theirs["output_tokens_per_s"]
        out.append(
            f"default vs llama.cpp built for this host at c=1: p50 {p50:.2f}x "
            f"({mine['latency_p50_s']:.2f} vs {theirs['latency_p50_s']:.2f} s), output tok/s "
            f"{tok:.2f}x ({mine['output_tokens_per_s']:.1f} vs "
            f"{theirs['output_tokens_per_s']:.1f}) (target: p50 <= {P50_AT_MOST:g}x, tok/s >= "
            f"{TOK_AT_LEAST:g}x): {_met(p50 <= P50_AT_MOST and tok >= TOK_AT_LEAST)}"
        )
    mine = _level(results, ME, CLIENTS)
    for peer, name, p99_too in ((VLLM, "vLLM's own server", True), (NATIVE, "llama.cpp", False)):
        theirs = _level(results, peer, CLIENTS)
        if not (mine and theirs and theirs["rps"] > 0):
            continue
        ratio = mine["rps"] / theirs["rps"]
        p99, their_p99 = mine["latency_p99_s"], theirs["latency_p99_s"]
        ok = ratio >= 1.0 and (p99 <= their_p99 or not p99_too)
        goal = ">= 1.0x, p99 no higher" if p99_too else ">= 1.0x"
        out.append(
            f"default vs {name} at c={CLIENTS}: {ratio:.2f}x completed translations/s "
            f"({mine['rps']:.2f} vs {theirs['rps']:.2f}), p99 {p99:.2f} vs {their_p99:.2f} s "
            f"(target {goal}): {_met(ok)}"
        )
    return out
