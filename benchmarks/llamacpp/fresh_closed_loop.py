"""One closed-loop level against a freshly started server: `clients` clients send the first `n`
texts of the bench's `variable` workload once each to /v1/translate and wait for the answers;
prints the wall time, output tokens and tok/s, and the five slowest requests.

`dragoman bench` runs its levels one after another on one server with the sentence cache off,
so its second level repeats the first level's texts into engines that still hold their prompts;
this runs a level on a server that has seen nothing, to compare two builds of the same engine.

    dragoman serve --architecture llama-cpp --port 8399 &   # wait for /ready
    python benchmarks/llamacpp/fresh_closed_loop.py http://127.0.0.1:8399 16 32
"""

from __future__ import annotations

import asyncio
import sys
import time

import httpx

from dragoman.eval.workloads import build


async def main(url: str, clients: int, n: int) -> None:
    items = build("variable", n)
    queue: asyncio.Queue[int] = asyncio.Queue()
    for i in range(len(items)):
        queue.put_nowait(i)
    done: list[tuple[int, float, int]] = []
    start = time.monotonic()
    async with httpx.AsyncClient(base_url=url, timeout=600) as client:

        async def worker() -> None:
            while not queue.empty():
                i = queue.get_nowait()
                item, sent = items[i], time.monotonic()
                body = {"text": item.text, "source_lang": item.source, "target_lang": item.target}
                r = await client.post("/v1/translate", json=body)
                r.raise_for_status()
                tokens = r.json()["translations"][0]["output_tokens"]
                done.append((i, round(time.monotonic() - sent, 1), tokens))

        await asyncio.gather(*(worker() for _ in range(clients)))
    wall = time.monotonic() - start
    tokens = sum(t for _, _, t in done)
    print(f"wall {wall:.1f} s, {tokens} output tokens, {tokens / wall:.1f} tok/s")
    print("slowest (index, seconds, tokens):", sorted(done, key=lambda d: -d[1])[:5])


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3])))
