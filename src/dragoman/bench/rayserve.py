"""`dragoman bench --ray`: what the Ray Serve path costs against `dragoman serve`. The same
echo engine (no model: the path's own cost), the same workload and concurrency, direct and
through Ray (HTTP proxy -> ingress replica -> model replica), levels interleaved in one run.
Two engine times: none (the path's CPU cost, all of it overhead) and 50 ms a text (a short
engine step, where the overhead shows as added latency)."""

from __future__ import annotations

import asyncio
from typing import Any

from rich.console import Console

from dragoman.bench import workloads
from dragoman.bench.loadgen import closed_loop
from dragoman.bench.servers import Launched, launch_echo, launch_ray
from dragoman.bench.stats import summarise
from dragoman.bench.targets import DragomanTarget
from dragoman.settings import BenchSettings

LANGUAGES = "en,fr,de,es,zh,ko"
ECHO_DELAYS = (0.0, 0.05)


async def _compare(
    s: BenchSettings, delay: float, direct: Launched, ray: Launched, console: Console
) -> list[dict[str, Any]]:
    items = workloads.build(s.workload, s.workload_size, s.seed)
    rows = []
    for c in s.concurrency:
        runs: dict[str, dict[str, Any]] = {}
        for via, url in (("direct", direct.url), ("ray", ray.url), ("direct2", direct.url)):
            await closed_loop(DragomanTarget(url), items[:8], 2, 8, 30)  # warm connections
            records = await closed_loop(
                DragomanTarget(url), items, c, s.requests_per_level, s.seconds_per_level
            )
            runs[via] = summarise(records).to_dict()
        # Direct runs before and after the Ray one: their mean cancels slow drift.
        d1, d2, r = runs["direct"], runs["direct2"], runs["ray"]
        direct_p50 = (d1["latency_p50_s"] + d2["latency_p50_s"]) / 2
        direct_p99 = (d1["latency_p99_s"] + d2["latency_p99_s"]) / 2
        direct_rps = (d1["rps"] + d2["rps"]) / 2
        row = {
            "echo_delay_s": delay,
            "concurrency": c,
            "direct": d1,
            "direct_after": d2,
            "ray": r,
            "added_p50_ms": 1000 * (r["latency_p50_s"] - direct_p50),
            "added_p99_ms": 1000 * (r["latency_p99_s"] - direct_p99),
            "throughput_ratio": r["rps"] / direct_rps if direct_rps else float("nan"),
        }
        rows.append(row)
        console.log(
            f"echo {1000 * delay:g} ms, c={c}: added p50 {row['added_p50_ms']:.2f} ms, "
            f"throughput {100 * row['throughput_ratio']:.1f}% of direct, "
            f"errors {r['errors']} (direct {d1['errors'] + d2['errors']})"
        )
    return rows


async def run_ray_bench(s: BenchSettings, console: Console) -> dict[str, Any]:
    logs = s.out / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    rows: list[dict[str, Any]] = []
    starts: list[float] = []
    for delay in ECHO_DELAYS:
        # No sentence cache: every text reaches the (echo) engine on both paths.
        flags = ("--echo-delay", str(delay), "--cache-mib", "0")
        direct = await asyncio.to_thread(launch_echo, logs, LANGUAGES, *flags)
        try:
            ray = await asyncio.to_thread(
                launch_ray,
                logs,
                *("--architecture", "echo", "--languages", LANGUAGES, "--log-level", "warning"),
                *flags,
            )
            starts.append(ray.start_seconds)
            console.log(f"Ray Serve app up in {ray.start_seconds:.1f} s (cluster start included)")
            try:
                rows += await _compare(s, delay, direct, ray, console)
            finally:
                await asyncio.to_thread(ray.stop)
        finally:
            await asyncio.to_thread(direct.stop)
    return {"rows": rows, "ray_start_seconds": starts}


def markdown(results: dict[str, Any], s: BenchSettings) -> str:
    lines = [
        f"# Ray Serve path overhead: echo engine, workload `{s.workload}`, "
        f"{s.requests_per_level} requests per level",
        "",
        "| engine time | clients | direct p50 ms | Ray p50 ms | added p50 ms | direct p99 ms "
        "| Ray p99 ms | direct req/s | Ray req/s | Ray/direct | Ray errors |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results["rows"]:
        d, p = r["direct"], r["ray"]
        lines.append(
            f"| {1000 * r['echo_delay_s']:g} ms | {r['concurrency']} "
            f"| {1000 * d['latency_p50_s']:.2f} | {1000 * p['latency_p50_s']:.2f} "
            f"| {r['added_p50_ms']:.2f} | {1000 * d['latency_p99_s']:.2f} "
            f"| {1000 * p['latency_p99_s']:.2f} | {d['rps']:.1f} | {p['rps']:.1f} "
            f"| {100 * r['throughput_ratio']:.1f}% | {p['errors']} |"
        )
    lines += [
        "",
        "Direct: `dragoman serve --architecture echo`; Ray: `dragoman deploy ray --architecture "
        "echo` (one ingress replica, one model replica, on a local Ray cluster it starts). "
        "Direct is measured before and after each Ray level; added latency and the ratio use "
        "their mean. Load client, Ray's processes and the servers share the machine's cores. "
        "Ray app start, cluster start included: "
        + ", ".join(f"{t:.1f} s" for t in results["ray_start_seconds"])
        + ".",
        "",
    ]
    return "\n".join(lines)
