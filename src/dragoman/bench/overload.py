"""`dragoman bench --overload`: issue 10's overload targets on one real server.

First the saturation point: closed-loop clients up to the admission bound (each client has one
text in flight, so at the bound nothing is refused): goodput (200s a second) and p99. Then 4x
the bound of clients for the same time: a refused client waits the server's Retry-After
(capped, so a phase stays bounded) and sends again, as the openai and deepl clients do. Same
server, same run: the verdicts are ratios of the two."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import random
import ssl
import statistics
import time
from dataclasses import dataclass
from typing import Any

import httpx
import psutil
from rich.console import Console

from dragoman.bench.monitor import Monitor
from dragoman.bench.servers import Launched, engine_flags, launch_dragoman, start
from dragoman.bench.settings import BenchSettings
from dragoman.eval import workloads
from dragoman.eval.workloads import Item
from dragoman.stats import percentile

OVERLOAD_FACTOR = 4
# Seconds: the longest a refused client waits. The openai client waits what Retry-After (or
# retry-after-ms) says when it is at most 60 s, as the server's Retry-After always is.
RETRY_CAP = 60.0
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


def _backoff(retry_after: str | None, tries: int, rng: random.Random) -> float:
    """The deepl client's schedule (1 s, x1.6 a retry, +-23% jitter), never sooner than
    Retry-After, capped like the rest."""
    wait = max(_wait_for(retry_after), 1.6 ** (tries - 1) * rng.uniform(0.77, 1.23))
    return min(RETRY_CAP, wait)


async def phase(
    url: str, items: list[Item], clients: int, seconds: float, max_ok: int, backoff: bool = False
) -> tuple[list[Attempt], float]:
    """`clients` closed-loop clients for `seconds` (or until `max_ok` 200s); a refused text is
    sent again after Retry-After, or with `backoff` after the longer of Retry-After and an
    exponential back-off. Returns every attempt and when sending stopped."""
    source = itertools.cycle(items)
    rng = random.Random(0)
    attempts: list[Attempt] = []
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
                wait = _backoff(retry_after, tries, rng) if backoff else _wait_for(retry_after)
                await asyncio.sleep(min(wait, max(0.0, end - now)))

    # Each simulated client has its own connection, as real clients do (one shared pool of
    # hundreds of connections costs httpx CPU per request that grows with their number). The
    # clients are built before the clock starts, over one TLS context: building one each costs
    # ~25 ms of CPU, seconds for hundreds, and on 2 cores the load would measure itself.
    tls = ssl.create_default_context()
    async with contextlib.AsyncExitStack() as stack:
        pool = [
            await stack.enter_async_context(
                httpx.AsyncClient(base_url=url, timeout=600, verify=tls)
            )
            for _ in range(clients)
        ]
        t0 = time.perf_counter()
        end = t0 + seconds
        await asyncio.gather(*(client(c, n) for n, c in enumerate(pool)))
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
        "clients_served": len({a.client for a in ok}),
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
    server: Launched, items: list[Item], clients: int, s: BenchSettings, backoff: bool = False
) -> dict[str, Any]:
    before = await _counters(server.url)
    me, api = psutil.Process(), psutil.Process(server.pid)
    cpu0, api0, wall0 = me.cpu_times(), api.cpu_times(), time.perf_counter()
    monitor = Monitor(pid=server.pid, interval=0.5).start()
    try:
        attempts, stopped = await phase(
            server.url, items, clients, s.seconds_per_level, s.requests_per_level, backoff
        )
    finally:
        monitor.stop()
    cpu1, api1, wall = me.cpu_times(), api.cpu_times(), time.perf_counter() - wall0
    cores = psutil.cpu_count() or 1
    out = {"clients": clients, "backoff": backoff, **summarise(attempts, stopped)}
    cpu = monitor.series()
    out["server_cpu_percent"] = statistics.fmean(cpu) if cpu else None
    system = [x.system_cpu for x in monitor.samples]
    out["system_cpu_percent"] = statistics.fmean(system) if system else None
    used = (cpu1.user - cpu0.user) + (cpu1.system - cpu0.system)
    out["load_client_cpu_percent"] = 100 * used / wall / cores
    # The API process alone (HTTP, admission, refusals), without the engine's processes.
    api_used = (api1.user - api0.user) + (api1.system - api0.system)
    out["api_process_cpu_percent"] = 100 * api_used / wall / cores
    # Whatever else ran on the machine meanwhile: a phase that shared it is not comparable.
    if out["system_cpu_percent"] is not None and out["server_cpu_percent"] is not None:
        out["other_cpu_percent"] = max(
            0.0,
            out["system_cpu_percent"] - out["server_cpu_percent"] - out["load_client_cpu_percent"],
        )
    after = await _counters(server.url)
    out["server_counters"] = {k: after[k] - before[k] for k in COUNTERS}
    out["attempt_fields"] = FIELDS
    out["attempt_records"] = [_row(a) for a in attempts]
    return out


# Server counters read around each phase: what the server says it admitted, refused, coalesced.
COUNTERS = (
    "dragoman_admitted_total",
    'dragoman_rejected_total{reason="overloaded"}',
    "dragoman_coalesced_total",
)
FIELDS = ("client", "start", "seconds", "status", "code", "retry_after", "tries", "since_first")


async def _counters(url: str) -> dict[str, float]:
    async with httpx.AsyncClient(base_url=url, timeout=30) as c:
        text = (await c.get("/metrics")).text
    out = dict.fromkeys(COUNTERS, 0.0)
    for line in text.splitlines():
        name, _, value = line.rpartition(" ")
        if name in out:
            out[name] = float(value)
    return out


def _row(a: Attempt) -> str:
    """One attempt as one line of the JSON file (there are thousands)."""
    values = (a.client, f"{a.start:.3f}", f"{a.seconds:.4f}", a.status, a.code, a.retry_after)
    return ",".join("" if v is None else str(v) for v in values) + (
        f",{a.tries},{a.since_first:.3f}" if a.status == 200 else ",,"
    )


def _line(p: dict[str, Any]) -> str:
    return (
        f"{p['clients']} clients: {p['goodput_rps']:.2f} req/s goodput, admitted p50 "
        f"{p['admitted_p50_s']:.2f} s p99 {p['admitted_p99_s']:.2f} s, 429s {p['refused_429']}, "
        f"5xx {p['status_5xx']}, connection errors {p['connection_errors']}"
    )


async def run_overload_bench(s: BenchSettings, console: Console) -> dict[str, Any]:
    logs = s.out / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    # Distinct texts only: identical ones in flight would be coalesced into one engine request.
    built = workloads.build(s.workload, s.workload_size, s.seed)
    items = list({(i.text, i.target): i for i in built}.values())
    # No translation cache: phases send the same texts again, and a hit is no engine work.
    flags = [*engine_flags(s), "--log-level", "warning"]  # the cache is off
    server = await start(launch_dragoman, logs, *flags)
    try:
        async with httpx.AsyncClient(base_url=server.url, timeout=30) as c:
            bound = int((await c.get("/ready")).json()["admission_limit"])
        if not bound:
            raise RuntimeError("the server has no admission bound (--max-admitted 0)")
        await phase(server.url, items[-8:], 4, 120, 8)  # warm-up, not recorded
        # At max_num_seqs, then at the bound; the overload phases; the bound again, so drift
        # in a shared machine falls on both sides of the comparison.
        sweep = []
        for clients in sorted({min(s.max_num_seqs, bound), bound}):
            p = await _measured(server, items, clients, s)
            console.log("saturation " + _line(p))
            sweep.append(p)
        over = await _measured(server, items, OVERLOAD_FACTOR * bound, s)
        console.log("overload " + _line(over))
        # The same overload with clients that back off as the deepl client does: fewer
        # refusals a second, so what the refusals themselves cost shows in the difference.
        slower = await _measured(server, items, OVERLOAD_FACTOR * bound, s, backoff=True)
        console.log("overload, back-off " + _line(slower))
        after = await _measured(server, items, bound, s)
        console.log("saturation again " + _line(after))
    finally:
        await asyncio.to_thread(server.stop)
    return {
        "admission_limit": bound,
        "sweep": sweep,
        "overload": over,
        "overload_backoff": slower,
        "saturation_after": after,
        **_verdicts(sweep[-1], after, over, slower),
    }


def _verdicts(
    before: dict[str, Any], after: dict[str, Any], over: dict[str, Any], slower: dict[str, Any]
) -> dict[str, Any]:
    """Against the mean of the two phases at the bound, before and after the overload: the
    queue there is as full as under overload, so its p99 is the one overload should keep."""
    goodput = (before["goodput_rps"] + after["goodput_rps"]) / 2
    p99 = (before["admitted_p99_s"] + after["admitted_p99_s"]) / 2
    goodput_ratio = over["goodput_rps"] / goodput if goodput else 0.0
    p99_ratio = over["admitted_p99_s"] / p99
    return {
        "saturation_goodput_rps": goodput,
        "saturation_p99_s": p99,
        "goodput_ratio": goodput_ratio,
        "p99_ratio": p99_ratio,
        "backoff_goodput_ratio": slower["goodput_rps"] / goodput if goodput else 0.0,
        "backoff_p99_ratio": slower["admitted_p99_s"] / p99,
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
        f"{out['admission_limit']} texts, its default; translation cache off), workload "
        f"`{meta['workload']}`, "
        f"{meta['seconds_per_phase']:g} s a phase, phases in this order. At 4x, refused clients "
        f"wait Retry-After and send again; with back-off, the longer of Retry-After and the "
        f"deepl client's schedule (1 s, x1.6 a retry, jitter); both at most "
        f"{meta['retry_cap_s']:g} s.",
        "",
        "| phase | clients | 200s | goodput req/s | admitted p50 / p99 s | with retries p99 s "
        "| clients served | 429s | 429 answer p50 / p99 ms | 5xx | connection errors "
        "| server CPU % | API process CPU % | load client CPU % | other processes CPU % |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    phases = [("saturation", p) for p in out["sweep"]] + [
        ("4x, Retry-After", out["overload"]),
        ("4x, back-off", out["overload_backoff"]),
        ("saturation again", out["saturation_after"]),
    ]
    for name, p in phases:
        refusals = (
            f"{p['refusal_p50_ms']:.1f} / {p['refusal_p99_ms']:.1f}" if p["refused_429"] else "-"
        )
        cpu = p["server_cpu_percent"]
        lines.append(
            f"| {name} | {p['clients']} | {p['ok']} | {p['goodput_rps']:.2f} "
            f"| {p['admitted_p50_s']:.2f} / {p['admitted_p99_s']:.2f} "
            f"| {p['with_retries_p99_s']:.2f} | {p['clients_served']} | {p['refused_429']} "
            f"| {refusals} | {p['status_5xx']} | {p['connection_errors']} "
            f"| {'-' if cpu is None else f'{cpu:.0f}'} | {p['api_process_cpu_percent']:.0f} "
            f"| {p['load_client_cpu_percent']:.0f} | {p.get('other_cpu_percent', 0):.0f} |"
        )
    over, slower = out["overload"], out["overload_backoff"]
    lines += [
        "",
        f"- goodput at 4x: {100 * out['goodput_ratio']:.1f}% of saturation (the mean of the "
        "two phases at the bound): "
        f"{over['goodput_rps']:.2f} vs {out['saturation_goodput_rps']:.2f} req/s (target "
        f">= {100 * GOODPUT_SHARE:.0f}%): {_verdict(met['goodput'])}. With back-off: "
        f"{100 * out['backoff_goodput_ratio']:.1f}%.",
        f"- admitted p99 at 4x: {out['p99_ratio']:.2f}x the p99 at the bound "
        f"({over['admitted_p99_s']:.2f} vs {out['saturation_p99_s']:.2f} s; target "
        f"<= {P99_FACTOR:g}x): {_verdict(met['p99'])}. With back-off: "
        f"{out['backoff_p99_ratio']:.2f}x.",
        f"- 5xx: {over['status_5xx']} + {slower['status_5xx']}, connection errors: "
        f"{over['connection_errors']} + {slower['connection_errors']} (target 0): "
        f"{_verdict(met['no_5xx'] and met['no_connection_errors'])}",
        f"- 429s: {over['refused_429']}, codes {', '.join(over['refused_codes']) or '-'}, "
        f"without Retry-After {over['refused_without_retry_after']}, Retry-After values "
        f"{', '.join(over['retry_after_values'])} s, answered in {over['refusal_p50_ms']:.1f} ms "
        f"at p50 (target <= {1000 * REFUSAL_P50:.0f} ms): "
        f"{_verdict(met['refusal_p50_within_100ms'])}",
        "",
        "Server CPU: its process tree (engine included); API process: the HTTP server alone; "
        "both in % of all cores, which the load client shares; other processes: the rest of the "
        "machine's use (above a few %, the phase shared the cores). Clients served: clients with "
        "at least one 200. With retries: from a text's first attempt to its 200, refusals and "
        "waits included. Texts coalesced with an identical one in flight (no engine work), by "
        "phase: "
        + ", ".join(f"{int(p['server_counters']['dragoman_coalesced_total'])}" for _, p in phases)
        + ".",
        "",
    ]
    return "\n".join(lines)
