"""Cache-hit latency over HTTP: from the in-process cache against from the shared store
(--cache-url, a local miss). One Redis-protocol server (dragoman.bench.store) and two echo
servers on 127.0.0.1 given its URL (the echo engine: the hit path never touches an engine).

1. Server A translates N distinct sentences: each a miss at both levels, answered by the echo
   engine and written to the store.
2. Server B (fresh, its local cache empty) is sent the same N, each sentence twice in a row:
   the first a local miss answered by the store (the shared hit path), the second a local hit.
   Paired back to back, so a busy machine slows both alike.
One client, one request at a time, keep-alive; the hit counts are checked on /metrics.

    python benchmarks/cache/shared_store.py --out benchmarks/results/cache-store-<host>
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

from dragoman.bench.servers import launch_echo
from dragoman.bench.store import find_store_server, start_store
from dragoman.host import detect


def _sentences(n: int) -> list[str]:
    return [f"Sentence number {i} of the shared cache measurement is here." for i in range(n)]


async def _phase(url: str, texts: list[str], repeat: int = 1) -> list[list[float]]:
    """Per round of `repeat`, the time of each text's request."""
    times: list[list[float]] = [[] for _ in range(repeat)]
    async with httpx.AsyncClient(base_url=url, timeout=30) as c:
        await c.get("/health")  # the connection is open before the first timed request
        for text in texts:
            body = {"text": text, "source_lang": "en", "target_lang": "fr"}
            for round_ in times:
                started = time.perf_counter()
                (await c.post("/v1/translate", json=body)).raise_for_status()
                round_.append(time.perf_counter() - started)
    return times


def _metric(url: str, name: str) -> float:
    text = httpx.get(f"{url}/metrics", timeout=10).text
    return sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines() if line.startswith(name))


def _summary(times: list[float]) -> dict[str, float]:
    ordered = sorted(times)
    return {
        "p50_ms": 1000 * statistics.median(times),
        "p90_ms": 1000 * ordered[int(0.9 * len(ordered)) - 1],
        "p99_ms": 1000 * ordered[int(0.99 * len(ordered)) - 1],
        "mean_ms": 1000 * statistics.fmean(times),
    }


def run(n: int) -> dict[str, Any]:
    logs = Path(tempfile.mkdtemp(prefix="cache-store-"))
    store = start_store(logs)
    texts = _sentences(n)
    out: dict[str, Any] = {
        "machine": detect().label(),
        "store": Path(find_store_server() or "").name,
        "requests": n,
        "load_before": os.getloadavg()[0],
    }
    try:
        a = launch_echo(logs, "en,fr", "--echo-delay", "0", "--cache-url", store.url)
        try:
            out["miss_engine"] = _summary(asyncio.run(_phase(a.url, texts))[0])
        finally:
            a.stop()
        b = launch_echo(logs, "en,fr", "--echo-delay", "0", "--cache-url", store.url)
        try:
            shared, local = asyncio.run(_phase(b.url, texts, repeat=2))
            out["shared_hit"], out["local_hit"] = _summary(shared), _summary(local)
            out["shared_minus_local_p50_ms"] = 1000 * statistics.median(
                s - loc for s, loc in zip(shared, local, strict=True)
            )
            out["hits"] = {
                level: _metric(b.url, f'dragoman_cache_hits_total{{level="{level}"}}')
                for level in ("local", "shared")
            }
            out["store_errors"] = _metric(b.url, "dragoman_cache_store_errors_total")
        finally:
            b.stop()
    finally:
        store.stop()
    out["load_after"] = os.getloadavg()[0]
    return out


def markdown(out: dict[str, Any]) -> str:
    rows = [
        ("local hit (in-process cache)", out["local_hit"]),
        ("shared hit (local miss, store answers)", out["shared_hit"]),
        ("miss at both levels (echo engine, store written)", out["miss_engine"]),
    ]
    lines = [
        f"# Cache hits over HTTP: {out['machine']}",
        "",
        f"{out['requests']} distinct sentences per row, one client, keep-alive, echo engine; "
        f"store: {out['store']} on 127.0.0.1. Hits seen on server B's /metrics: local "
        f"{out['hits']['local']:g}, shared {out['hits']['shared']:g}; store errors "
        f"{out['store_errors']:g}. Each shared hit was followed at once by the same request "
        "again (a local hit): the median of the pairs' differences is "
        f"{out['shared_minus_local_p50_ms']:.2f} ms. Load average (1 min) before and after: "
        f"{out['load_before']:.2f}, {out['load_after']:.2f} on 2 cores.",
        "",
        "| path | p50 ms | p90 ms | p99 ms | mean ms |",
        "|---|---|---|---|---|",
    ]
    lines += [
        f"| {name} | {s['p50_ms']:.2f} | {s['p90_ms']:.2f} | {s['p99_ms']:.2f} | "
        f"{s['mean_ms']:.2f} |"
        for name, s in rows
    ]
    return "\n".join([*lines, ""])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=300)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    out = run(args.requests)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "shared-store.json").write_text(json.dumps(out, indent=2) + "\n")
    (args.out / "shared-store.md").write_text(markdown(out))
    print(markdown(out))


if __name__ == "__main__":
    main()
