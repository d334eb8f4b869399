"""Garbage-collection pauses in the server process, with the heap frozen once the engine is up
(`--gc-freeze`, the default) and without, one server after the other on the host's default
engine.

Load, the same for both: CLIENTS closed-loop clients for SECONDS, each request a short text
from a pool of sentences (answered by the cache: many requests, the allocation of a real
front end) and one in FRESH_EVERY (20; 0: none) a fresh text the engine translates. From
the server's own `dragoman_gc_pause_seconds` histogram: collections and time per
generation; from the clients: each request's latency, whether the cache or the engine
answered it.

    flock /tmp/dragoman-engine.lock python benchmarks/gc/pauses.py OUT [--seconds 120]

Writes OUT/pauses.json and OUT/pauses.md. Traffic goes to 127.0.0.1 only.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import statistics
import time
from pathlib import Path
from typing import Any

import httpx

from dragoman.bench.servers import launch_dragoman
from dragoman.host import detect

WORDS = [
    "the",
    "service",
    "keeps",
    "every",
    "setting",
    "you",
    "change",
    "for",
    "thirty",
    "days",
    "before",
    "it",
    "removes",
    "old",
    "copies",
    "from",
    "the",
    "disk",
    "and",
    "sends",
    "a",
    "short",
    "note",
    "to",
    "the",
    "owner",
    "of",
    "the",
    "account",
]


def sentence(n: int) -> str:
    """A distinct, plausible sentence for each n (the pool's and the fresh ones)."""
    words = [WORDS[(n * 7 + i * 3) % len(WORDS)] for i in range(6 + n % 7)]
    return f"{' '.join(words).capitalize()} ({n})."


def parse(metrics: str, name: str) -> dict[str, float]:
    out: dict[str, float] = {}
    for line in metrics.splitlines():
        if line.startswith(name + "{"):
            labels, value = line.rsplit(" ", 1)
            generation = labels.split('generation="', 1)[1].split('"', 1)[0]
            out[generation] = float(value)
    return out


async def drive(
    url: str, seconds: float, clients: int, pool: int, fresh_every: int
) -> dict[str, Any]:
    fresh = itertools.count(10_000_000)
    latencies: dict[str, list[float]] = {"cache": [], "engine": []}
    errors = 0
    end = 0.0  # set once the pool is cached

    async def client(c: httpx.AsyncClient, k: int) -> None:
        nonlocal errors
        for i in itertools.count():
            if time.monotonic() >= end:
                return
            engine = fresh_every > 0 and i % fresh_every == k % fresh_every
            n = next(fresh) if engine else (i * clients + k) % pool
            body = {"text": sentence(n), "source_lang": "en", "target_lang": "fr"}
            started = time.perf_counter()
            r = await c.post("/v1/translate", json=body)
            took = time.perf_counter() - started
            if r.status_code != 200:
                errors += 1
                continue
            cached = r.json()["translations"][0]["output_tokens"] == 0
            latencies["cache" if cached else "engine"].append(took)

    limits = httpx.Limits(max_connections=clients)
    async with httpx.AsyncClient(base_url=url, timeout=600, limits=limits) as c:
        for start in range(0, pool, 16):  # the pool into the cache first, 16 at a time
            await asyncio.gather(
                *(
                    c.post(
                        "/v1/translate",
                        json={"text": sentence(n), "source_lang": "en", "target_lang": "fr"},
                    )
                    for n in range(start, min(pool, start + 16))
                )
            )
        before = (await c.get("/metrics")).text
        started = time.monotonic()
        end = started + seconds
        await asyncio.gather(*(client(c, k) for k in range(clients)))
        elapsed = time.monotonic() - started
        after = (await c.get("/metrics")).text

    def summary(values: list[float]) -> dict[str, float]:
        if not values:
            return {"requests": 0}
        ordered = sorted(values)
        return {
            "requests": len(values),
            "p50_ms": 1000 * statistics.median(values),
            "p99_ms": 1000 * ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))],
            "max_ms": 1000 * ordered[-1],
        }

    def during(name: str) -> dict[str, float]:
        """`name`'s values per generation, less what they were before the load."""
        then = parse(before, name)
        return {g: v - then.get(g, 0.0) for g, v in parse(after, name).items()}

    counts = during("dragoman_gc_pause_seconds_count")
    sums = during("dragoman_gc_pause_seconds_sum")
    return {
        "seconds": elapsed,
        "errors": errors,
        "cache": summary(latencies["cache"]),
        "engine": summary(latencies["engine"]),
        "gc": {g: {"collections": counts[g], "seconds": sums.get(g, 0.0)} for g in counts},
    }


def markdown(result: dict[str, Any]) -> str:
    lines = [
        f"Host: {result['machine']}; {result['clients']} clients for {result['seconds']:g} s "
        f"each, a pool of {result['pool']} sentences, "
        + (
            f"one request in {result['fresh_every']} a fresh text."
            if result["fresh_every"]
            else "every request answered by the cache."
        ),
        "",
        "| heap | full collections | their time s | mean ms | gen 0/1 collections | "
        "cache p50 ms | cache p99 ms | cache max ms | engine p50 s | errors |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name, run in result["runs"].items():
        gc2 = run["gc"].get("2", {"collections": 0, "seconds": 0.0})
        young = sum(run["gc"].get(g, {"collections": 0})["collections"] for g in ("0", "1"))
        mean = 1000 * gc2["seconds"] / gc2["collections"] if gc2["collections"] else 0.0
        cache, engine = run["cache"], run["engine"]
        lines.append(
            f"| {name} | {gc2['collections']:g} | {gc2['seconds']:.2f} | {mean:.0f} | "
            f"{young:g} | {cache.get('p50_ms', 0):.1f} | {cache.get('p99_ms', 0):.1f} | "
            f"{cache.get('max_ms', 0):.0f} | {engine.get('p50_ms', 0) / 1000:.2f} | "
            f"{run['errors']} |"
        )
    return "\n".join(lines) + "\n"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("out", type=Path)
    p.add_argument("--seconds", type=float, default=120.0)
    p.add_argument("--clients", type=int, default=16)
    p.add_argument("--pool", type=int, default=64)
    p.add_argument("--fresh-every", type=int, default=20, help="0: the cache answers all")
    args = p.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    host = detect()
    result: dict[str, Any] = {
        "machine": host.label(),
        "host": host.as_dict(),
        "seconds": args.seconds,
        "clients": args.clients,
        "pool": args.pool,
        "fresh_every": args.fresh_every,
        "runs": {},
    }
    for name, flag in (("frozen (--gc-freeze)", "--gc-freeze"), ("not frozen", "--no-gc-freeze")):
        server = launch_dragoman(args.out, flag, "--log-level", "warning")
        try:
            run = asyncio.run(
                drive(server.url, args.seconds, args.clients, args.pool, args.fresh_every)
            )
        finally:
            server.stop()
        result["runs"][name] = run
        print(name, json.dumps(run))
    (args.out / "pauses.json").write_text(json.dumps(result, indent=1) + "\n")
    (args.out / "pauses.md").write_text(markdown(result))
    print(markdown(result))


if __name__ == "__main__":
    main()
