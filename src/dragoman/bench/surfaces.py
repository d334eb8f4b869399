"""`dragoman bench --surfaces`: the compatible surfaces' targets, each measured in one run.

1. Batching: LibreTranslate's `/translate` with a list `q` of 16 texts against the same 16 texts
   sent one after another (what LibreTranslate's own clients do, and what its server does
   inside a batch), on the real engine; rounds alternated. Target: the list >= 4x faster.
2. Coalescing: 6 identical concurrent DeepL requests on the real engine; the server's
   `dragoman_coalesced_total` and vLLM's finished-request count say how many engine requests
   they cost. Target: one (5 coalesced).
3. Adapter overhead: p50 latency of each surface against the native `/v1/translate` on the
   echo engine (no model, no delay: the HTTP layer alone), surfaces interleaved per round.
   Target: <= 2 ms p50 added."""

from __future__ import annotations

import asyncio
import statistics
import time
from typing import Any

import httpx
from rich.console import Console

from dragoman.bench.servers import Launched, engine_flags, launch_dragoman, launch_echo, start
from dragoman.bench.settings import BenchSettings
from dragoman.eval import workloads

BATCH = 16
ROUNDS = 3
COPIES = 6
OVERHEAD_REQUESTS = 300


def _counter(metrics: str, name: str) -> float:
    """Sum of a counter's samples (all labels) in a Prometheus exposition."""
    total = 0.0
    for line in metrics.splitlines():
        if line.startswith(name) and not line.startswith("#"):
            head = line.split(" ", 1)[0]
            if head == name or head.startswith(name + "{"):
                total += float(line.rsplit(" ", 1)[1])
    return total


def _lt(item: workloads.Item) -> dict[str, Any]:
    return {"q": item.text, "source": item.source, "target": item.target}


async def _batching(
    c: httpx.AsyncClient, items: list[workloads.Item], target: str
) -> dict[str, Any]:
    texts = [i for i in items if i.target == target][:BATCH]
    rounds: dict[str, list[float]] = {"list": [], "sequential": []}
    for n in range(ROUNDS):
        order = ("list", "sequential") if n % 2 == 0 else ("sequential", "list")
        for mode in order:
            # A different text set per round and mode: nothing is answered from the cache or
            # from work still in flight.
            batch = [
                workloads.Item(f"{i.text} ({n}{mode[0]})", i.source, i.target, i.kind)
                for i in texts
            ]
            started = time.perf_counter()
            if mode == "list":
                body = {"q": [i.text for i in batch], "source": batch[0].source, "target": target}
                (await c.post("/translate", json=body)).raise_for_status()
            else:
                for i in batch:
                    (await c.post("/translate", json=_lt(i))).raise_for_status()
            rounds[mode].append(time.perf_counter() - started)
    med = {k: statistics.median(v) for k, v in rounds.items()}
    return {
        "texts": len(texts),
        "pair": f"{texts[0].source}-{target}",
        "seconds": rounds,
        "median_seconds": med,
        "speedup": med["sequential"] / med["list"],
    }


async def _coalescing(c: httpx.AsyncClient) -> dict[str, Any]:
    before = (await c.get("/metrics")).text
    body = {"text": ["The evening light fell softly over the old harbour."], "target_lang": "DE"}
    rs = await asyncio.gather(*(c.post("/v2/translate", json=body) for _ in range(COPIES)))
    after = (await c.get("/metrics")).text
    engine = _counter(after, "vllm:request_success_total") - _counter(
        before, "vllm:request_success_total"
    )
    return {
        "requests": COPIES,
        "statuses": sorted({r.status_code for r in rs}),
        "distinct_answers": len({r.text for r in rs}),
        "coalesced": _counter(after, "dragoman_coalesced_total")
        - _counter(before, "dragoman_coalesced_total"),
        "engine_requests": engine,
    }


_SURFACES = {
    "native": ("/v1/translate", lambda t: {"text": t, "source_lang": "en", "target_lang": "fr"}),
    "libretranslate": ("/translate", lambda t: {"q": t, "source": "en", "target": "fr"}),
    "deepl": ("/v2/translate", lambda t: {"text": [t], "source_lang": "EN", "target_lang": "FR"}),
}


async def _overhead(c: httpx.AsyncClient) -> dict[str, Any]:
    times: dict[str, list[float]] = {k: [] for k in _SURFACES}
    for n in range(OVERHEAD_REQUESTS):
        for name, (path, body) in _SURFACES.items():
            started = time.perf_counter()
            r = await c.post(path, json=body(f"Hello number {n}, how are you?"))
            times[name].append(time.perf_counter() - started)
            r.raise_for_status()
    p50 = {k: statistics.median(v[10:]) for k, v in times.items()}  # first 10: warm-up
    return {
        "requests_per_surface": OVERHEAD_REQUESTS,
        "p50_ms": {k: 1000 * v for k, v in p50.items()},
        "added_p50_ms": {k: 1000 * (v - p50["native"]) for k, v in p50.items() if k != "native"},
    }


async def run_surfaces_bench(s: BenchSettings, console: Console) -> dict[str, Any]:
    from dragoman.bench.runner import host_meta

    logs = s.out / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    out: dict[str, Any] = {"meta": host_meta(s)}
    echo: Launched = await start(launch_echo, logs, "en,fr,de", "--echo-delay", "0")
    try:
        async with httpx.AsyncClient(base_url=echo.url, timeout=60) as c:
            out["overhead"] = await _overhead(c)
    finally:
        await asyncio.to_thread(echo.stop)
    console.log(f"adapter overhead: {out['overhead']['added_p50_ms']}")
    flags = [*engine_flags(s), "--log-level", "warning"]
    server: Launched = await start(launch_dragoman, logs, *flags)
    try:
        async with httpx.AsyncClient(base_url=server.url, timeout=600) as c:
            items = workloads.build("ui", 400, s.seed)
            await c.post("/translate", json=_lt(items[0]))  # warm-up
            targets = sorted({i.target for i in items})
            out["batching"] = []
            for target in targets:
                row = await _batching(c, items, target)
                out["batching"].append(row)
                console.log(f"batching {row['pair']}: {row['speedup']:.2f}x")
            out["coalescing"] = await _coalescing(c)
            console.log(f"coalescing: {out['coalescing']}")
    finally:
        await asyncio.to_thread(server.stop)
    return out


def markdown(out: dict[str, Any]) -> str:
    co, ov = out["coalescing"], out["overhead"]
    verdict = {True: "MET", False: "MISSED"}
    worst = max(ov["added_p50_ms"].values())
    lines = [
        f"# Compatible surfaces: {out['meta']['machine']}",
        "",
        "| target | measured | verdict |",
        "|---|---|---|",
    ]
    for b in out["batching"]:
        lines.append(
            f"| list `q` of {b['texts']} ({b['pair']}) on /translate >= 4x faster than one by "
            f"one | {b['median_seconds']['list']:.2f} s vs "
            f"{b['median_seconds']['sequential']:.2f} s: {b['speedup']:.2f}x (median of "
            f"{ROUNDS} alternated rounds) | {verdict[b['speedup'] >= 4]} |"
        )
    lines += [
        f"| {co['requests']} identical concurrent requests cost one engine request | "
        f"{co['coalesced']:g} coalesced, {co['engine_requests']:g} engine request(s), "
        f"{co['distinct_answers']} distinct answer(s) | "
        f"{verdict[co['coalesced'] == co['requests'] - 1 and co['engine_requests'] == 1]} |",
        "| adapter overhead vs /v1/translate <= 2 ms p50 (echo engine) | "
        + ", ".join(f"{k} {v:+.2f} ms" for k, v in ov["added_p50_ms"].items())
        + f" (native p50 {ov['p50_ms']['native']:.2f} ms, {ov['requests_per_surface']} each) | "
        f"{verdict[worst <= 2]} |",
        "",
    ]
    return "\n".join(lines)
