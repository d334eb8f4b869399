"""`dragoman bench --ray`: what the Ray Serve path costs against `dragoman serve`. The same
engine, workload and concurrency, direct and through Ray (HTTP proxy -> ingress replica ->
model replica), levels interleaved in one run. On the echo engine (no model: the path's own
cost) at two engine times: none (the path's CPU cost, all of it overhead) and 50 ms a text (a
short engine step, where the overhead shows as added latency); then on the real engine,
where it counts. One engine at a time: the direct server stops before Ray's replica starts."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rich.console import Console

from dragoman.bench.loadgen import closed_loop
from dragoman.bench.servers import (
    engine_flags,
    launch_dragoman,
    launch_echo,
    launch_ray,
    start,
)
from dragoman.bench.settings import BenchSettings
from dragoman.bench.stats import summarise
from dragoman.bench.targets import DragomanTarget
from dragoman.eval import workloads
from dragoman.eval.workloads import Item

LANGUAGES = "en,fr,de,es,zh,ko"
ECHO_DELAYS = (0.0, 0.05)


async def _level(url: str, s: BenchSettings, items: Sequence[Item], c: int) -> dict[str, Any]:
    await closed_loop(DragomanTarget(url), items[:8], 2, 8, 60)  # warm connections
    records = await closed_loop(
        DragomanTarget(url), items, c, s.requests_per_level, s.seconds_per_level
    )
    return summarise(records).to_dict()


def _row(backend: str, delay: float, c: int, runs: dict[str, dict[str, Any]]) -> dict[str, Any]:
    directs = [runs[k] for k in ("direct", "direct2") if k in runs]
    r = runs["ray"]
    direct_p50 = sum(d["latency_p50_s"] for d in directs) / len(directs)
    direct_p99 = sum(d["latency_p99_s"] for d in directs) / len(directs)
    direct_rps = sum(d["rps"] for d in directs) / len(directs)
    return {
        "backend": backend,
        "echo_delay_s": delay,
        "concurrency": c,
        "direct": directs[0],
        "direct_after": directs[-1],
        "ray": r,
        "added_p50_ms": 1000 * (r["latency_p50_s"] - direct_p50),
        "added_p99_ms": 1000 * (r["latency_p99_s"] - direct_p99),
        "throughput_ratio": r["rps"] / direct_rps if direct_rps else float("nan"),
    }


def _log(console: Console, row: dict[str, Any]) -> None:
    name = _engine_label(row)
    console.log(
        f"{name}, {_layout(row)}, c={row['concurrency']}: added p50 {row['added_p50_ms']:.2f} ms, "
        f"throughput {100 * row['throughput_ratio']:.1f}% of direct, "
        f"errors {row['ray']['errors']} (direct {row['direct']['errors']})"
    )


async def _echo(
    s: BenchSettings, delay: float, layout: str, logs: Path, console: Console
) -> tuple[list[dict[str, Any]], float]:
    """Both servers up at once (no engine): direct before and after each Ray level, their
    mean cancelling slow drift."""
    items = workloads.build(s.workload, s.workload_size, s.seed)
    # No sentence cache: every text reaches the (echo) engine on both paths.
    flags = ("--echo-delay", str(delay), "--cache-mib", "0")
    direct = await start(launch_echo, logs, LANGUAGES, *flags)
    try:
        ray = await start(
            launch_ray,
            logs,
            *("--architecture", "echo", "--languages", LANGUAGES, "--log-level", "warning"),
            *flags,
            *("--ray-layout", layout, "--ray-ingress", s.ray_ingress),
        )
        try:
            rows = []
            for c in s.concurrency:
                runs = {}
                for via, server in (("direct", direct), ("ray", ray), ("direct2", direct)):
                    runs[via] = await _level(server.url, s, items, c)
                rows.append({**_row("echo", delay, c, runs), "layout": layout})
                _log(console, rows[-1])
            return rows, ray.start_seconds
        finally:
            await asyncio.to_thread(ray.stop)
    finally:
        await asyncio.to_thread(direct.stop)


def layout_architecture(s: BenchSettings, layout: str) -> str:
    """The engine a layout runs, which the direct server must run too: split deploys vLLM's
    model replicas; whole runs what `dragoman serve` picks on this host (llama.cpp on an
    AVX2-only CPU)."""
    if layout == "split":
        return "continuous"
    from dragoman.engine.choice import resolve_architecture
    from dragoman.service.settings import ServeSettings

    serve = ServeSettings(model=s.model, data_dir=s.data_dir, llama_server=s.llama_server)
    chosen, _ = resolve_architecture(serve.model_copy(update={"architecture": "host"}))
    return str(chosen.architecture)


async def _engine(
    s: BenchSettings, layouts: list[str], logs: Path, console: Console
) -> tuple[list[dict[str, Any]], list[float]]:
    """The real engine: one server at a time (two would share the cores); each layout against
    a direct server on the same engine, measured first."""
    items = workloads.build(s.workload, s.workload_size, s.seed)
    directs: dict[str, dict[int, dict[str, Any]]] = {}
    rows, starts = [], []
    for layout in layouts:
        arch = layout_architecture(s, layout)
        flags = [*engine_flags(s), "--log-level", "warning", "--architecture", arch]
        if arch not in directs:
            direct = await start(launch_dragoman, logs, *flags)
            try:
                directs[arch] = {c: await _level(direct.url, s, items, c) for c in s.concurrency}
            finally:
                await asyncio.to_thread(direct.stop)
        layout_flags = ("--ray-layout", layout, "--ray-ingress", s.ray_ingress)
        ray = await start(launch_ray, logs, *flags, *layout_flags, timeout=900)
        try:
            for c in s.concurrency:
                runs = {"direct": directs[arch][c], "ray": await _level(ray.url, s, items, c)}
                rows.append({**_row(arch, 0.0, c, runs), "layout": layout})
                _log(console, rows[-1])
        finally:
            await asyncio.to_thread(ray.stop)
        starts.append(ray.start_seconds)
    return rows, starts


async def run_ray_bench(s: BenchSettings, console: Console) -> dict[str, Any]:
    logs = s.out / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    rows: list[dict[str, Any]] = []
    starts: list[float] = []
    for backend in s.proxy_backends:
        if backend != "echo":
            got, started = await _engine(s, list(s.ray_layouts), logs, console)
            rows += got
            starts += started
            continue
        for delay in ECHO_DELAYS:
            for layout in s.ray_layouts:
                got, start = await _echo(s, delay, layout, logs, console)
                console.log(f"Ray Serve app up in {start:.1f} s (cluster start included)")
                rows += got
                starts.append(start)
    return {"rows": rows, "ray_start_seconds": starts, "ray_ingress": s.ray_ingress}


def _engine_label(row: dict[str, Any]) -> str:
    if row.get("backend") == "continuous":
        return "real (vLLM)"
    if row.get("backend") == "llama-cpp":
        return "real (llama.cpp)"
    return f"echo {1000 * row['echo_delay_s']:g} ms"


def _layout(row: dict[str, Any]) -> str:
    return str(row.get("layout", "split"))


def markdown(results: dict[str, Any], s: BenchSettings) -> str:
    lines = [
        f"# Ray Serve path overhead: workload `{s.workload}`, "
        f"{s.requests_per_level} requests per level",
        "",
        "| engine | layout | clients | direct p50 ms | Ray p50 ms | added p50 ms "
        "| direct p99 ms | Ray p99 ms | direct req/s | Ray req/s | Ray/direct | Ray errors |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results["rows"]:
        d, p = r["direct"], r["ray"]
        lines.append(
            f"| {_engine_label(r)} | {_layout(r)} | {r['concurrency']} "
            f"| {1000 * d['latency_p50_s']:.2f} | {1000 * p['latency_p50_s']:.2f} "
            f"| {r['added_p50_ms']:.2f} | {1000 * d['latency_p99_s']:.2f} "
            f"| {1000 * p['latency_p99_s']:.2f} | {d['rps']:.1f} | {p['rps']:.1f} "
            f"| {100 * r['throughput_ratio']:.1f}% | {p['errors']} |"
        )
    lines += [
        "",
        "Direct: `dragoman serve`; Ray: `dragoman deploy ray` with the same flags, on a local "
        f"Ray cluster it starts, ingress {results.get('ray_ingress', 'proxy')} "
        "(`--ray-ingress`): layout split, one ingress replica and one model replica; "
        "layout whole, one replica that is a whole server. On the echo engine "
        "direct is measured before and after each Ray level, and added latency and the ratio "
        "use their mean; on the real engine direct runs first and stops before Ray's replica "
        "starts. Load client, Ray's processes and the servers share the machine's cores. "
        "Ray app start, cluster start included: "
        + ", ".join(f"{t:.1f} s" for t in results["ray_start_seconds"])
        + ".",
        "",
    ]
    return "\n".join(lines)
