"""Prompt and decode speed of llama.cpp's server (the xllamacpp wheel's, built for AVX2) on one
GGUF, over its HTTP API: prompts of ~185 tokens (1 and 16 at once, no prompt cache, one token
generated) and 64 generated tokens (ignore_eos, greedy; 1 and 16 streams, each after a ~20-token
prompt, so the 16-stream figure includes their prompts). Best of `rounds`; one JSON line.

    python benchmarks/gguf/speed.py PATH.gguf [ROUNDS]
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from typing import Any

import httpx

SENTENCE = "The museum opens at nine in the morning and closes at six on weekdays. "
LONG = "Translate into French: " + SENTENCE * 12
SHORT = "Translate into French: " + SENTENCE


def start(path: str) -> tuple[Any, str]:
    import xllamacpp

    p = xllamacpp.CommonParams()
    p.model.path = path
    p.n_parallel = 16
    p.n_ctx = 16 * 512
    p.cpuparams.n_threads = 2
    p.cpuparams_batch.n_threads = 2
    server = xllamacpp.Server(p)
    return server, str(server.listening_address)


async def request(c: httpx.AsyncClient, url: str, prompt: str, n: int) -> dict[str, Any]:
    body = {"prompt": prompt, "n_predict": n, "ignore_eos": True, "temperature": 0}
    r = await c.post(url + "/completion", json={**body, "cache_prompt": False})
    return dict(r.json()["timings"])


async def measure(url: str, rounds: int) -> dict[str, float]:
    out: dict[str, float] = {}
    async with httpx.AsyncClient(timeout=900) as c:
        await request(c, url, SHORT, 8)  # warm-up
        for n in (1, 16):
            pp, tg = [], []
            for _ in range(rounds):
                t = time.perf_counter()
                timings = await asyncio.gather(*(request(c, url, LONG, 1) for _ in range(n)))
                pp.append(sum(x["prompt_n"] for x in timings) / (time.perf_counter() - t))
                t = time.perf_counter()
                timings = await asyncio.gather(*(request(c, url, SHORT, 64) for _ in range(n)))
                wall = time.perf_counter() - t
                # one stream: its decode alone; sixteen: tokens over the wall time
                alone = timings[0]["predicted_per_second"]
                tg.append(alone if n == 1 else sum(x["predicted_n"] for x in timings) / wall)
            out[f"prompt_tok_s_{n}"] = round(max(pp), 1)
            out[f"decode_tok_s_{n}"] = round(max(tg), 1)
    return out


def main() -> None:
    path = sys.argv[1]
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 2
    server, url = start(path)
    speed = asyncio.run(measure(url, rounds))
    del server
    print(json.dumps({"gguf": path.rsplit("/", 1)[-1], **speed}), flush=True)


if __name__ == "__main__":
    main()
