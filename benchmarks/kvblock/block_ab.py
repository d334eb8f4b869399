"""KV cache block size A/B: `dragoman serve` with each `--block-size`, alternated in one run.

Prompts share a pair's cached prefix (system prompt and examples) only in whole KV blocks;
vLLM's CPU default is 128 tokens, and a pair whose shared prefix is shorter than that (en-zh:
119 tokens, en-ja: 127 with the 0.5B's template) shares none of it. Each round starts a server
per block size (one engine at a time, the sentence cache off) and measures:

1. one client: each pair's sentences sent one by one (median latency per pair);
2. 16 clients: every (pair, sentence) at once (wall time, output tok/s);
3. vLLM's own counters over the round: prompt tokens computed vs taken from the prefix cache.

    python benchmarks/kvblock/block_ab.py OUT_DIR [ROUNDS] [SIZES...]   (default 2; none 32)

Writes OUT_DIR/block_ab.json and block_ab.md (host CPU flags included)."""

from __future__ import annotations

import asyncio
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx

from dragoman.bench.documents import SENTENCES
from dragoman.bench.servers import engine_flags, launch_dragoman
from dragoman.bench.settings import BenchSettings

PAIRS = ("fr", "de", "es", "ko", "zh", "ja")
PER_PAIR = 6
CLIENTS = 16
COUNTERS = (
    "vllm:prompt_tokens_total",
    "vllm:prefix_cache_queries_total",
    "vllm:prefix_cache_hits_total",
    "vllm:generation_tokens_total",
)


def _counters(text: str) -> dict[str, float]:
    out = dict.fromkeys(COUNTERS, 0.0)
    for line in text.splitlines():
        name = line.split("{", 1)[0].split(" ", 1)[0]
        if name in out:
            out[name] += float(line.rsplit(" ", 1)[1])
    return out


async def _post(c: httpx.AsyncClient, text: str, target: str) -> tuple[float, int]:
    body = {"text": text, "source_lang": "en", "target_lang": target}
    started = time.perf_counter()
    r = await c.post("/v1/translate", json=body)
    r.raise_for_status()
    return time.perf_counter() - started, r.json()["translations"][0].get("output_tokens", 0)


async def _round(url: str, n: int) -> dict[str, Any]:
    sentences = [f"{s[:-1]} ({n})." for s in SENTENCES]
    async with httpx.AsyncClient(base_url=url, timeout=600) as c:
        for target in PAIRS:  # each pair's prefix computed once before timing
            await _post(c, "Warm up the engine.", target)
        before = _counters((await c.get("/metrics")).text)
        one = {}
        for target in PAIRS:
            times = [(await _post(c, s, target))[0] for s in sentences[:PER_PAIR]]
            one[target] = statistics.median(times)
        jobs = [(s, t) for t in PAIRS for s in sentences[PER_PAIR : PER_PAIR * 2]]
        gate = asyncio.Semaphore(CLIENTS)

        async def send(s: str, t: str) -> tuple[float, int]:
            async with gate:
                return await _post(c, s, t)

        started = time.perf_counter()
        done = await asyncio.gather(*(send(s, t) for s, t in jobs))
        wall = time.perf_counter() - started
        after = _counters((await c.get("/metrics")).text)
    delta = {k.removeprefix("vllm:"): after[k] - before[k] for k in COUNTERS}
    return {
        "one_client_p50_s": one,
        "clients16": {
            "requests": len(jobs),
            "wall_s": wall,
            "p50_s": statistics.median(d[0] for d in done),
            "p99_s": sorted(d[0] for d in done)[-1],
        },
        "vllm": delta,
    }


def main() -> None:
    out = Path(sys.argv[1])
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 2
    sizes = [None if a == "none" else int(a) for a in sys.argv[3:]] or [None, 32]
    out.mkdir(parents=True, exist_ok=True)
    (out / "logs").mkdir(exist_ok=True)
    flags = subprocess.run(
        "grep -o 'avx512[a-z_0-9]*\\|amx[a-z_0-9]*' /proc/cpuinfo | sort -u",
        shell=True,
        capture_output=True,
        text=True,
    ).stdout.split()
    settings = BenchSettings()
    results: dict[str, list[dict[str, Any]]] = {str(s): [] for s in sizes}
    for n in range(rounds):
        order = sizes if n % 2 == 0 else sizes[::-1]
        for size in order:
            extra = [] if size is None else ["--block-size", str(size)]
            server = launch_dragoman(
                out / "logs", *engine_flags(settings), *extra, "--log-level", "warning"
            )
            try:
                r = asyncio.run(_round(server.url, n + 1))
            finally:
                server.stop()
            results[str(size)].append(r)
            print(size, json.dumps(r), flush=True)
    doc = {"cpu_flags": flags, "pairs": PAIRS, "per_pair": PER_PAIR, "results": results}
    (out / "block_ab.json").write_text(json.dumps(doc, indent=1))
    (out / "block_ab.md").write_text(_markdown(doc))
    print(_markdown(doc))


def _markdown(doc: dict[str, Any]) -> str:
    host = " ".join(doc["cpu_flags"]) or "no avx512/amx (AVX2-only)"
    lines = [
        f"# KV block size A/B ({host})",
        "",
        "One client: median seconds a sentence, per en-X pair (median over rounds). 16 clients:"
        " every pair's next sentences at once. Prompt tokens: computed / from the prefix cache.",
        "",
        "| block size | "
        + " | ".join(f"1 client en-{p}" for p in doc["pairs"])
        + " | 16 clients wall s | prompt computed / cached |",
        "|---" * (len(doc["pairs"]) + 3) + "|",
    ]
    for size, rounds in doc["results"].items():
        one = [statistics.median(r["one_client_p50_s"][p] for r in rounds) for p in doc["pairs"]]
        wall = statistics.median(r["clients16"]["wall_s"] for r in rounds)
        hits = statistics.median(r["vllm"]["prefix_cache_hits_total"] for r in rounds)
        prompt = statistics.median(r["vllm"]["prompt_tokens_total"] for r in rounds)
        label = "vLLM default" if size == "None" else size
        lines.append(
            f"| {label} | "
            + " | ".join(f"{x:.2f}" for x in one)
            + f" | {wall:.1f} | {prompt - hits:.0f} / {hits:.0f} |"
        )
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
