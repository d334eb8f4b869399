"""`dragoman bench --overload`: issue 10's overload targets on one real server.

First the saturation point: closed-loop clients up to the admission bound (each client has one
text in flight, so at the bound nothing is refused): goodput (200s a second) and p99. Then 4x
the bound of clients for the same time: a refused client waits the server's Retry-After
(capped, so a phase stays bounded) and sends again, as the openai and deepl clients do. Same
server, same run: the verdicts are ratios of the two."""

from __future__ import annotations

import asyncio
import itertools
import statistics
import time
from dataclasses import asdict, dataclass
from typing import Any

import httpx
import psutil
from rich.console import Console

from dragoman.bench import workloads
from dragoman.bench.monitor import Monitor
from dragoman.bench.servers import Launched, engine_flags, launch_dragoman
from dragoman.bench.stats import percentile
from dragoman.bench.workloads import Item
from dragoman.settings import BenchSettings

OVERLOAD_FACTOR = 4
RETRY_CAP = 5.0  # seconds: the longest a refused client waits, whatever Retry-After says
# Targets of issue 10.
GOODPUT_SHARE = 0.95
P99_FACTOR = 2.0
REFUSAL_P50 = 0.1  # seconds


@dataclass
class Attempt:
    client: int
    start: float  # seconds since the phase began
    seconds: float
    status: int | None  # None: no HTTP answer (error says why)
    code: str = ""
    retry_after: str | None = None
    error: str = ""
    tries: int = 1  # attempts this text took, this one included (200s only)
    since_first: float = 0.0  # seconds from the text's first attempt to this answer


async def _send(c: httpx.AsyncClient, item: Item) -> tuple[int | None, str, str | None, str]:
    body = {"text": item.text, "source_lang": item.source, "target_lang": item.target}
    try:
        r = await c.post("/v1/translate", json=body)
    except httpx.HTTPError as exc:
        return None, "", None, f"{type(exc).__name__}: {exc}"[:200]
    code = ""
    if r.status_code != 200:
        try:
            code = str(r.json().get("error", {}).get("code", ""))
        except ValueError:
            code = "not-json"
    return r.status_code, code, r.headers.get("retry-after"), ""


def _wait_for(retry_after: str | None) -> float:
    try:
        return min(RETRY_CAP, max(0.0, float(retry_after or 1)))
    except ValueError:
        return 1.0


async def phase(
    url: str, items: list[Item], clients: int, seconds: float, max_ok: int
) -> tuple[list[Attempt], float]:
    """`clients` closed-loop clients for `seconds` (or until `max_ok` 200s); a refused text is
    sent again after Retry-After. Returns every attempt and when sending stopped."""
    source = itertools.cycle(items)
    attempts: list[Attempt] = []
    t0 = time.perf_counter()
    end = t0 + seconds
    ok = [0]

    def open_() -> bool:
        return time.perf_counter() < end and ok[0] < max_ok

    async def client(c: httpx.AsyncClient, n: int) -> None:
        while open_():
            item, first, tries = next(source), time.perf_counter(), 0
            while open_():
                tries += 1
                started = time.perf_counter()
                status, code, retry_after, error = await _send(c, item)
                now = time.perf_counter()
                a = Attempt(n, started - t0, now - started, status, code, retry_after, error)
                attempts.append(a)
                if status == 200:
                    ok[0] += 1
                    a.tries, a.since_first = tries, now - first
                    break
                if status != 429:
                    return  # counted below; a real client would give up or go elsewhere
                await asyncio.sleep(min(_wait_for(retry_after), max(0.0, end - now)))

    limits = httpx.Limits(max_connections=clients + 4, max_keepalive_connections=None)
    async with httpx.AsyncClient(base_url=url, limits=limits, timeout=600) as c:
        await asyncio.gather(*(client(c, n) for n in range(clients)))
    stopped = min(time.perf_counter(), end) - t0
    return attempts, stopped


def summarise(attempts: list[Attempt], stopped: float) -> dict[str, Any]:
    ok = [a for a in attempts if a.status == 200]
    refused = [a for a in attempts if a.status == 429]
    in_window = [a for a in ok if a.start + a.seconds <= stopped]
    lat = [a.seconds for a in ok]
    refusal = [a.seconds for a in refused]
    waited = [a.since_first for a in ok]
    return {
        "seconds": stopped,
        "attempts": len(attempts),
        "ok": len(ok),
        "goodput_rps": len(in_window) / stopped if stopped > 0 else 0.0,
        "admitted_p50_s": percentile(lat, 50),
        "admitted_p99_s": percentile(lat, 99),
        "with_retries_p50_s": percentile(waited, 50),
        "with_retries_p99_s": percentile(waited, 99),
        "retried_texts": sum(a.tries > 1 for a in ok),
        "refused_429": len(refused),
        "refused_without_retry_after": sum(a.retry_after is None for a in refused),
        "refused_codes": sorted({a.code for a in refused}),
        "refusal_p50_ms": 1000 * percentile(refusal, 50),
        "refusal_p99_ms": 1000 * percentile(refusal, 99),
        "retry_after_values": sorted({a.retry_after or "" for a in refused}),
        "status_5xx": sum(a.status is not None and a.status >= 500 for a in attempts),
        "connection_errors": sum(a.status is None for a in attempts),
        "other_statuses": sorted({a.status for a in attempts if a.status not in (200, 429, None)}),
        "errors": sorted({a.error or a.code for a in attempts if a.status not in (200, 429)})[:10],
    }


async def _measured(
    server: Launched, items: list[Item], clients: int, s: BenchSettings
) -> dict[str, Any]:
    me = psutil.Process()
    cpu0, wall0 = me.cpu_times(), time.perf_counter()
    monitor = Monitor(pid=server.pid, interval=0.5).start()
    try:
        attempts, stopped = await phase(
            server.url, items, clients, s.seconds_per_level, s.requests_per_level
        )
    finally:
        monitor.stop()
    cpu1, wall = me.cpu_times(), time.perf_counter() - wall0
    cores = psutil.cpu_count() or 1
    out = {"clients": clients, **summarise(attempts, stopped)}
    cpu = monitor.series()
    out["server_cpu_percent"] = statistics.fmean(cpu) if cpu else None
    used = (cpu1.user - cpu0.user) + (cpu1.system - cpu0.system)
    out["load_client_cpu_percent"] = 100 * used / wall / cores
    out["attempt_records"] = [asdict(a) for a in attempts]
    return out


def _line(p: dict[str, Any]) -> str:
    return (
        f"{p['clients']} clients: {p['goodput_rps']:.2f} req/s goodput, admitted p50 "
        f"{p['admitted_p50_s']:.2f} s p99 {p['admitted_p99_s']:.2f} s, 429s {p['refused_429']}, "
        f"5xx {p['status_5xx']}, connection errors {p['connection_errors']}"
    )


async def run_overload_bench(s: BenchSettings, console: Console) -> dict[str, Any]:
    logs = s.out / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    items = workloads.build(s.workload, s.workload_size, s.seed)
    flags = [*engine_flags(s), "--log-level", "warning"]
    server = await asyncio.to_thread(launch_dragoman, logs, *flags)
    try:
        async with httpx.AsyncClient(base_url=server.url, timeout=30) as c:
            bound = int((await c.get("/ready")).json()["admission_limit"])
        if not bound:
            raise RuntimeError("the server has no admission bound (--max-admitted 0)")
        await phase(server.url, items[-8:], 4, 120, 8)  # warm-up, not recorded
        sweep = []
        for clients in sorted({min(s.max_num_seqs, bound), bound}):
            p = await _measured(server, items, clients, s)
            console.log("saturation " + _line(p))
            sweep.append(p)
        over = await _measured(server, items, OVERLOAD_FACTOR * bound, s)
        console.log("overload " + _line(over))
    finally:
        await asyncio.to_thread(server.stop)
    return {"admission_limit": bound, "sweep": sweep, "overload": over, **_verdicts(sweep, over)}


def _verdicts(sweep: list[dict[str, Any]], over: dict[str, Any]) -> dict[str, Any]:
    """Goodput against the best of the sweep; p99 against the level at the bound (the queue is
    as full there as under overload, so that is the p99 overload should keep)."""
    best = max(p["goodput_rps"] for p in sweep)
    at_bound = sweep[-1]
    goodput_ratio = over["goodput_rps"] / best if best else 0.0
    p99_ratio = over["admitted_p99_s"] / at_bound["admitted_p99_s"]
    return {
        "saturation_goodput_rps": best,
        "saturation_p99_s": at_bound["admitted_p99_s"],
        "goodput_ratio": goodput_ratio,
        "p99_ratio": p99_ratio,
        "met": {
            "goodput": goodput_ratio >= GOODPUT_SHARE,
            "p99": p99_ratio <= P99_FACTOR,
            "no_5xx": over["status_5xx"] == 0,
            "no_connection_errors": over["connection_errors"] == 0,
            "every_429_has_retry_after": over["refused_without_retry_after"] == 0,
            "refusal_p50_within_100ms": over["refusal_p50_ms"] <= 1000 * REFUSAL_P50,
        },
    }


def run_overload(s: BenchSettings, console: Console) -> dict[str, Any]:
    from dragoman.bench.runner import host_meta

    out = asyncio.run(run_overload_bench(s, console))
    out["meta"] = {
        **host_meta(s),
        "workload": s.workload,
        "seconds_per_phase": s.seconds_per_level,
        "max_ok_per_phase": s.requests_per_level,
        "max_num_seqs": s.max_num_seqs,
        "retry_cap_s": RETRY_CAP,
    }
    return out


def _verdict(ok: bool) -> str:
    return "MET" if ok else "MISSED"


def markdown(out: dict[str, Any]) -> str:
    meta, met = out["meta"], out["met"]
    lines = [
        f"# Overload: {meta['machine']}",
        "",
        f"One `dragoman serve` (max_num_seqs {meta['max_num_seqs']}, admission bound "
        f"{out['admission_limit']} texts, its default), workload `{meta['workload']}`, "
        f"{meta['seconds_per_phase']:g} s a phase. Refused clients wait Retry-After (at most "
        f"{meta['retry_cap_s']:g} s) and send again.",
        "",
        "| phase | clients | 200s | goodput req/s | admitted p50 / p99 s | with retries p99 s "
        "| 429s | 429 answer p50 / p99 ms | 5xx | connection errors | server CPU % "
        "| load client CPU % |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    phases = [("saturation", p) for p in out["sweep"]] + [("4x overload", out["overload"])]
    for name, p in phases:
        refusals = (
            f"{p['refusal_p50_ms']:.1f} / {p['refusal_p99_ms']:.1f}" if p["refused_429"] else "-"
        )
        cpu = p["server_cpu_percent"]
        lines.append(
            f"| {name} | {p['clients']} | {p['ok']} | {p['goodput_rps']:.2f} "
            f"| {p['admitted_p50_s']:.2f} / {p['admitted_p99_s']:.2f} "
            f"| {p['with_retries_p99_s']:.2f} | {p['refused_429']} | {refusals} "
            f"| {p['status_5xx']} | {p['connection_errors']} "
            f"| {'-' if cpu is None else f'{cpu:.0f}'} | {p['load_client_cpu_percent']:.0f} |"
        )
    over = out["overload"]
    lines += [
        "",
        f"- goodput at 4x: {100 * out['goodput_ratio']:.1f}% of saturation "
        f"({over['goodput_rps']:.2f} vs {out['saturation_goodput_rps']:.2f} req/s; target "
        f">= {100 * GOODPUT_SHARE:.0f}%): {_verdict(met['goodput'])}",
        f"- admitted p99 at 4x: {out['p99_ratio']:.2f}x the p99 at the bound "
        f"({over['admitted_p99_s']:.2f} vs {out['saturation_p99_s']:.2f} s; target "
        f"<= {P99_FACTOR:g}x): {_verdict(met['p99'])}",
        f"- 5xx: {over['status_5xx']}, connection errors: {over['connection_errors']} "
        f"(target 0): {_verdict(met['no_5xx'] and met['no_connection_errors'])}",
        f"- 429s: {over['refused_429']}, codes {', '.join(over['refused_codes']) or '-'}, "
        f"without Retry-After {over['refused_without_retry_after']}, answered in "
        f"{over['refusal_p50_ms']:.1f} ms at p50 (target <= {1000 * REFUSAL_P50:.0f} ms): "
        f"{_verdict(met['refusal_p50_within_100ms'])}",
        "",
        "Server CPU is its process tree (engine included) in % of all cores; the load client "
        "shares those cores.",
        "",
    ]
    return "\n".join(lines)
