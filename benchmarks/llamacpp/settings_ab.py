"""llama.cpp server settings against its defaults, on the xllamacpp wheel's embedded server as
dragoman's llama-cpp engine runs it (16 slots of 512 tokens, 2 threads, continuous batching).

Each variant is a fresh server; per variant, a warm-up, then one client sending 6 requests, then
a closed loop of 16 clients sending 48, each request a distinct prompt of 10-80 words ("Translate
into French: ...") and 30-90 generated tokens (ignore_eos, greedy, no prompt cache); output
tokens a second over each loop's wall time. One JSON line per variant and level on stdout.

    sweep:  every variant in the given order, then in reverse, ROUNDS times in all (round r's
            loops draw their prompts from seeds r and 100 + r)
    paired: A and B in the order A B B A A B B A ..., PAIRS pairs; both members of a pair
            send the same 16-client prompts (seed 200 + pair)

Variants: base (the wheel's defaults: flash attention auto, f16 KV cache, poll 50, batch 2048
/ ubatch 512), faon / faoff (flash attention on / off), q8kv (q8_0 K and V cache), poll0 (no
busy-wait between ops), ub128 (batch and ubatch 128).

    python benchmarks/llamacpp/settings_ab.py sweep base,poll0,faon,faoff,q8kv,ub128 2
    python benchmarks/llamacpp/settings_ab.py paired faoff base 4
"""

from __future__ import annotations

import asyncio
import json
import random
import sys
import time
from pathlib import Path
from typing import Any

import httpx

GGUF = Path.home() / ".cache/dragoman/models/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"
_VOCABULARY = (
    "museum opens nine morning closes six river bridge city council meeting tomorrow "
    "weather cold windows doors library books children garden summer train station late "
    "ticket price market fresh bread cheese wine friends dinner evening music concert"
)
WORDS = _VOCABULARY.split()


def server(variant: str) -> Any:
    import xllamacpp

    p = xllamacpp.CommonParams()
    p.model.path = str(GGUF)
    p.n_parallel = 16
    p.n_ctx = 16 * 512
    p.cpuparams.n_threads = 2
    p.cpuparams_batch.n_threads = 2
    p.cont_batching = True
    fa = xllamacpp.llama_flash_attn_type
    if variant == "poll0":
        p.cpuparams.poll = 0
        p.cpuparams_batch.poll = 0
    elif variant == "faon":
        p.flash_attn_type = fa.LLAMA_FLASH_ATTN_TYPE_ENABLED
    elif variant == "faoff":
        p.flash_attn_type = fa.LLAMA_FLASH_ATTN_TYPE_DISABLED
    elif variant == "q8kv":
        p.cache_type_k = xllamacpp.ggml_type.GGML_TYPE_Q8_0
        p.cache_type_v = xllamacpp.ggml_type.GGML_TYPE_Q8_0
    elif variant == "ub128":
        p.n_ubatch = 128
        p.n_batch = 128
    elif variant != "base":
        raise SystemExit(f"unknown variant {variant}")
    return xllamacpp.Server(p)


async def closed_loop(url: str, requests: int, clients: int, seed: int) -> float:
    rng = random.Random(seed)
    jobs = []
    for _ in range(requests):
        words = " ".join(rng.choice(WORDS) for _ in range(rng.randint(10, 80)))
        jobs.append(("Translate into French: " + words + ".", rng.randint(30, 90)))
    tokens = 0
    async with httpx.AsyncClient(timeout=600) as c:

        async def client() -> None:
            nonlocal tokens
            while jobs:
                prompt, n = jobs.pop()
                body = {"prompt": prompt, "n_predict": n, "ignore_eos": True}
                body |= {"temperature": 0, "cache_prompt": False}
                r = await c.post(url + "/completion", json=body)
                r.raise_for_status()
                tokens += int(r.json()["timings"]["predicted_n"])

        started = time.perf_counter()
        await asyncio.gather(*(client() for _ in range(clients)))
        return tokens / (time.perf_counter() - started)


def run(variant: str, seed_one: int, seed_many: int, **label: int) -> None:
    s = server(variant)
    url = "http://" + str(s.listening_address).removeprefix("http://")
    asyncio.run(closed_loop(url, 4, 1, 99))  # warm-up
    one = asyncio.run(closed_loop(url, 6, 1, seed_one))
    many = asyncio.run(closed_loop(url, 48, 16, seed_many))
    line = {**label, "variant": variant, "c1_tok_s": round(one, 1), "c16_tok_s": round(many, 1)}
    print(json.dumps(line), flush=True)
    del s
    time.sleep(2)


def main() -> None:
    if sys.argv[1] == "sweep":
        names = sys.argv[2].split(",")
        for r in range(int(sys.argv[3])):
            for name in names if r % 2 == 0 else names[::-1]:
                run(name, r, 100 + r, round=r)
    elif sys.argv[1] == "paired":
        a, b, pairs = sys.argv[2], sys.argv[3], int(sys.argv[4])
        order = [v for k in range(pairs) for v in ((a, b) if k % 2 == 0 else (b, a))]
        for i, name in enumerate(order):
            run(name, i, 200 + i // 2, i=i)
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main()
