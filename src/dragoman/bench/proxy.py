"""`dragoman bench --proxy`: what `dragoman route` costs. Same backend, same workload, same
concurrency, direct and through the proxy, levels interleaved in one run. An echo backend
(no model) isolates the proxy's own latency; the real engine shows throughput under real work."""

from __future__ import annotations

import asyncio
from typing import Any

from rich.console import Console

from dragoman.bench.loadgen import closed_loop
from dragoman.bench.servers import (
    Launched,
    engine_flags,
    launch_dragoman,
    launch_echo,
    launch_router,
    start,
)
from dragoman.bench.settings import BenchSettings
from dragoman.bench.stats import summarise
from dragoman.bench.targets import DragomanTarget
from dragoman.eval import workloads


async def _compare(
    s: BenchSettings, backend: str, direct: Launched, router: Launched, console: Console
) -> list[dict[str, Any]]:
    items = workloads.build(s.workload, s.workload_size, s.seed)
    rows = []
    for c in s.concurrency:
        pair: dict[str, dict[str, Any]] = {}
        for via, url in (("direct", direct.url), ("proxy", router.url), ("direct2", direct.url)):
            await closed_loop(DragomanTarget(url), items[:4], 2, 4, 30)  # warm connections
            records = await closed_loop(
                DragomanTarget(url), items, c, s.requests_per_level, s.seconds_per_level
            )
            pair[via] = summarise(records).to_dict()
        # Direct runs before and after the proxied one: their mean cancels slow drift.
        d1, d2, p = pair["direct"], pair["direct2"], pair["proxy"]
        direct_p50 = (d1["latency_p50_s"] + d2["latency_p50_s"]) / 2
        direct_p99 = (d1["latency_p99_s"] + d2["latency_p99_s"]) / 2
        direct_rps = (d1["rps"] + d2["rps"]) / 2
        row = {
            "backend": backend,
            "concurrency": c,
            "direct": d1,
            "direct_after": d2,
            "proxy": p,
            "added_p50_ms": 1000 * (p["latency_p50_s"] - direct_p50),
            "added_p99_ms": 1000 * (p["latency_p99_s"] - direct_p99),
            "throughput_ratio": p["rps"] / direct_rps if direct_rps else float("nan"),
        }
        rows.append(row)
        console.log(
            f"{backend} c={c}: added p50 {row['added_p50_ms']:.2f} ms, p99 "
            f"{row['added_p99_ms']:.2f} ms, throughput {100 * row['throughput_ratio']:.1f}%"
            " of direct"
        )
    return rows


async def run_proxy_bench(s: BenchSettings, console: Console) -> dict[str, Any]:
    logs = s.out / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    rows: list[dict[str, Any]] = []
    for backend in s.proxy_backends:
        if backend == "echo":
            server = await start(launch_echo, logs, "en,fr,de,es,zh,ko")
        else:
            flags = [*engine_flags(s), "--log-level", "warning"]
            server = await start(launch_dragoman, logs, *flags)
        try:
            router = await start(
                launch_router, logs, "--backend-urls", server.url, "--log-level", "warning"
            )
            try:
                rows += await _compare(s, backend, server, router, console)
            finally:
                await asyncio.to_thread(router.stop)
        finally:
            await asyncio.to_thread(server.stop)
    return {"rows": rows}


def markdown(results: dict[str, Any], s: BenchSettings) -> str:
    lines = [
        f"# dragoman route overhead: workload `{s.workload}`, {s.requests_per_level} requests "
        "per level",
        "",
        "| backend | clients | direct p50 ms | proxy p50 ms | added p50 ms | direct p99 ms "
        "| proxy p99 ms | added p99 ms | direct req/s | proxy req/s | proxy/direct |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results["rows"]:
        d, p = r["direct"], r["proxy"]
        lines.append(
            f"| {r['backend']} | {r['concurrency']} | {1000 * d['latency_p50_s']:.2f} "
            f"| {1000 * p['latency_p50_s']:.2f} | {r['added_p50_ms']:.2f} "
            f"| {1000 * d['latency_p99_s']:.2f} | {1000 * p['latency_p99_s']:.2f} "
            f"| {r['added_p99_ms']:.2f} | {d['rps']:.2f} | {p['rps']:.2f} "
            f"| {100 * r['throughput_ratio']:.1f}% |"
        )
    lines += [
        "",
        "Direct is measured before and after each proxied level; added latency and the ratio "
        "use their mean. Load client, proxy and backend share the machine's cores.",
        "",
    ]
    return "\n".join(lines)
