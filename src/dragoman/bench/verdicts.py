"""The issue's targets, checked against one run's own figures (ratios within one run only)."""

from __future__ import annotations

from typing import Any


def _closed(results: dict[str, Any], arch: str) -> list[dict[str, Any]]:
    return [r for r in results["runs"] if r["architecture"] == arch and r["mode"] == "closed"]


def _at(runs: list[dict[str, Any]], concurrency: float) -> dict[str, Any] | None:
    return next((r for r in runs if r["concurrency"] == concurrency), None)


def verdicts(results: dict[str, Any], max_num_seqs: int) -> list[str]:
    out: list[str] = []
    cont = _closed(results, "continuous")
    if not cont:
        return out
    top = max(cont, key=lambda r: r["summary"]["rps"])
    top_c = max(r["concurrency"] for r in cont)
    off = results.get("offline")
    if off:
        ratio = top["summary"]["rps"] / off["rps"]
        out.append(
            f"continuous at saturation ({top['load']}) reaches {100 * ratio:.0f}% of the offline "
            f"ceiling ({top['summary']['rps']:.2f} vs {off['rps']:.2f} req/s; target >= 90%): "
            f"{'MET' if ratio >= 0.9 else 'MISSED'}"
        )
    for other, want in (("multiprocess", 4.0), ("static-batch", None)):
        mine, theirs = _at(cont, top_c), _at(_closed(results, other), top_c)
        if mine and theirs and theirs["summary"]["rps"] > 0:
            ratio = mine["summary"]["rps"] / theirs["summary"]["rps"]
            goal = f"; target >= {want:g}x: {'MET' if ratio >= want else 'MISSED'}" if want else ""
            out.append(f"continuous vs {other} at c={top_c:g}: {ratio:.2f}x throughput{goal}")
    one, two = (
        _at(_closed(results, "multiprocess"), top_c),
        _at(_closed(results, "multiprocess-2"), top_c),
    )
    if one and two:
        better = two["summary"]["rps"] > one["summary"]["rps"] * 1.05
        out.append(
            f"multiprocess with 2 workers: {two['summary']['rps']:.2f} vs 1 worker "
            f"{one['summary']['rps']:.2f} req/s at c={top_c:g} (target: not better): "
            f"{'MISSED' if better else 'MET'}"
        )
    shares = [
        (r["load"], r["summary"]["queue_share"])
        for r in cont
        if r["concurrency"] <= max_num_seqs and r["summary"]["queue_share"] is not None
    ]
    if shares:
        worst = max(shares, key=lambda x: x[1])
        out.append(
            f"continuous queue share at concurrency <= max_num_seqs: at most {100 * worst[1]:.1f}% "
            f"({worst[0]}; target < 10%): {'MET' if worst[1] < 0.1 else 'MISSED'}"
        )
    peer = _at(_closed(results, "vllm-serve"), top_c)
    mine = _at(cont, top_c)
    if peer and mine and peer["summary"]["rps"] > 0:
        ratio = mine["summary"]["rps"] / peer["summary"]["rps"]
        p99_ok = mine["summary"]["latency_p99_s"] <= peer["summary"]["latency_p99_s"] * 1.0
        met = ratio >= 0.95 and (p99_ok or ratio >= 1.0)
        out.append(
            f"continuous vs vllm serve at c={top_c:g}: {100 * ratio:.0f}% of its throughput, p99 "
            f"{mine['summary']['latency_p99_s']:.2f} vs {peer['summary']['latency_p99_s']:.2f} s "
            f"(target >= 95% at equal or lower p99): {'MET' if met else 'MISSED'}"
        )
    return out
