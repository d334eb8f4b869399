"""`dragoman bench --checks-cost`: what the per-request checks of issue 10 cost, on the echo
engine (no model, `--echo-delay 0`, so a request is nothing but HTTP and our own code).

Two servers, one with every check on (an API keys file, per-key limits set too high to
trigger, the default admission bound), one with them off (no keys, `--max-admitted 0`); one
client sends requests one at a time to each, in rounds alternated so drift in the machine falls
on both. Input limits, request ids and deadlines are always on, so they are in both."""

from __future__ import annotations

import asyncio
import statistics
import time
from pathlib import Path
from typing import Any

import httpx
from rich.console import Console

from dragoman.bench.servers import Launched, launch_echo
from dragoman.bench.settings import BenchSettings
from dragoman.eval import workloads
from dragoman.service.keys import hash_key
from dragoman.stats import percentile

ROUNDS = 6
TARGET_MS = 1.0
KEY = "dm-checks-cost-bench-key"
HIGH = str(10**9)  # per-key limits no request of the run can reach
LANGUAGES = "en,fr,de,es,zh,ko"


def start_servers(logs: Path) -> dict[str, Launched]:
    # No translation cache in either: every request takes the whole path, engine call included.
    common = ("--echo-delay", "0", "--cache-mib", "0")
    keys = logs / "keys"
    keys.write_text(f"{hash_key(KEY)} bench\n")
    keys.chmod(0o600)
    limits = ("--key-requests-per-minute", HIGH, "--key-chars-per-minute", HIGH)
    on = launch_echo(
        logs,
        LANGUAGES,
        *common,
        "--api-keys-file",
        str(keys),
        *limits,
        "--key-chars-per-day",
        HIGH,
    )
    try:
        off = launch_echo(logs, LANGUAGES, *common, "--max-admitted", "0")
    except BaseException:  # Ctrl-C while the second starts too
        on.stop()
        raise
    return {"on": on, "off": off}


async def _latencies(
    c: httpx.AsyncClient, items: list[workloads.Item], headers: dict[str, str]
) -> list[float]:
    out = []
    for item in items:
        body = {"text": item.text, "source_lang": item.source, "target_lang": item.target}
        started = time.perf_counter()
        r = await c.post("/v1/translate", json=body, headers=headers)
        out.append(time.perf_counter() - started)
        if r.status_code != 200:
            raise RuntimeError(f"{r.status_code}: {r.text[:300]}")
    return out


async def measure(servers: dict[str, Launched], n: int, console: Console) -> dict[str, Any]:
    items = workloads.build("ui", n, 0)
    headers = {"on": {"Authorization": f"Bearer {KEY}"}, "off": {}}
    rounds: dict[str, list[list[float]]] = {"on": [], "off": []}
    clients = {
        mode: httpx.AsyncClient(base_url=server.url, timeout=30) for mode, server in servers.items()
    }
    try:
        for mode, c in clients.items():
            await _latencies(c, items[:50], headers[mode])  # warm-up: connections, caches
        for k in range(ROUNDS):
            for mode in ("on", "off") if k % 2 == 0 else ("off", "on"):
                rounds[mode].append(await _latencies(clients[mode], items, headers[mode]))
            console.log(
                "round "
                + ", ".join(
                    f"{m} p50 {1000 * statistics.median(r[-1]):.3f} ms" for m, r in rounds.items()
                )
            )
    finally:
        for c in clients.values():
            await c.aclose()
    pooled = {m: [x for r in rs for x in r] for m, rs in rounds.items()}
    summary: dict[str, dict[str, Any]] = {
        m: {
            "requests": len(v),
            "p50_ms": 1000 * percentile(v, 50),
            "p99_ms": 1000 * percentile(v, 99),
            "round_p50_ms": [1000 * statistics.median(r) for r in rounds[m]],
        }
        for m, v in pooled.items()
    }
    added = [
        a - b
        for a, b in zip(summary["on"]["round_p50_ms"], summary["off"]["round_p50_ms"], strict=True)
    ]
    return {
        "rounds": ROUNDS,
        "requests_per_round": n,
        "modes": summary,
        "added_p50_ms": summary["on"]["p50_ms"] - summary["off"]["p50_ms"],
        "added_p99_ms": summary["on"]["p99_ms"] - summary["off"]["p99_ms"],
        "added_p50_ms_per_round": added,
    }


def run_checks_cost(s: BenchSettings, console: Console) -> dict[str, Any]:
    from dragoman.bench.runner import host_meta

    logs = s.out / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    servers = start_servers(logs)
    try:
        out = asyncio.run(measure(servers, s.requests_per_level, console))
    finally:
        for server in servers.values():
            server.stop()
    out["meta"] = host_meta(s)
    return out


def markdown(out: dict[str, Any]) -> str:
    on, off, added = out["modes"]["on"], out["modes"]["off"], out["added_p50_ms"]
    verdict = "MET" if added <= TARGET_MS else "MISSED"
    per_round = ", ".join(f"{x:+.3f}" for x in out["added_p50_ms_per_round"])
    return "\n".join(
        [
            f"# Cost of the request checks: {out['meta']['machine']}",
            "",
            f"Echo engine, `--echo-delay 0`, one client, {out['rounds']} rounds of "
            f"{out['requests_per_round']} requests per server, alternated.",
            "",
            "| checks | requests | p50 ms | p99 ms | p50 per round ms |",
            "|---|---|---|---|---|",
            *(
                f"| {name} | {m['requests']} | {m['p50_ms']:.3f} | {m['p99_ms']:.3f} "
                f"| {', '.join(f'{x:.3f}' for x in m['round_p50_ms'])} |"
                for name, m in (
                    ("on: key, per-key limits, admission", on),
                    ("off: no keys, --max-admitted 0", off),
                )
            ),
            "",
            f"Added p50: {added:+.3f} ms (per round: {per_round}); added p99: "
            f"{out['added_p99_ms']:+.3f} ms. Target <= {TARGET_MS:g} ms p50: {verdict}",
            "",
        ]
    )
