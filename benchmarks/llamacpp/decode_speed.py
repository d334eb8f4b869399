"""Decode speed of llama.cpp's server, 1 and 16 concurrent streams of 64 generated tokens each
(ignore_eos, greedy), over its HTTP API, like llama-batched-bench: the xllamacpp wheel's embedded
server (built for AVX2) or a llama-server binary (scripts/build-llama-cpp: built for this CPU).
Best of two rounds per level; one JSON line on stdout.

    python benchmarks/llamacpp/decode_speed.py wheel
    python benchmarks/llamacpp/decode_speed.py binary [path/to/llama-server]
"""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx

GGUF = Path.home() / ".cache/dragoman/models/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"
BINARY = Path.home() / ".cache/dragoman/llama.cpp/0.3.36/src/build/bin/llama-server"
SENTENCE = "The museum opens at nine in the morning and closes at six. "
PROMPT = "Translate into French: " + SENTENCE * 4
SLOTS, CTX, THREADS = 16, 16 * 512, 2


def wheel() -> tuple[Any, str]:
    import xllamacpp

    p = xllamacpp.CommonParams()
    p.model.path = str(GGUF)
    p.n_parallel = SLOTS
    p.n_ctx = CTX
    p.cpuparams.n_threads = THREADS
    p.cpuparams_batch.n_threads = THREADS
    server = xllamacpp.Server(p)
    return server, str(server.listening_address)


def binary(path: Path) -> tuple[subprocess.Popen[bytes], str]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    cmd = [str(path), "-m", str(GGUF), "-np", str(SLOTS), "-c", str(CTX), "-t", str(THREADS)]
    cmd += ["-tb", str(THREADS), "--host", "127.0.0.1", "--port", str(port)]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            if httpx.get(url + "/health").status_code == 200:
                break
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    return proc, url


async def one(c: httpx.AsyncClient, url: str) -> int:
    body = {"prompt": PROMPT, "n_predict": 64, "ignore_eos": True, "temperature": 0}
    r = await c.post(url + "/completion", json={**body, "cache_prompt": False})
    return int(r.json()["timings"]["predicted_n"])


async def measure(url: str) -> dict[int, float]:
    out: dict[int, float] = {}
    async with httpx.AsyncClient(timeout=600) as c:
        await one(c, url)  # warm-up
        for n in (1, 16):
            best = 0.0
            for _ in range(2):
                t = time.perf_counter()
                tokens = sum(await asyncio.gather(*(one(c, url) for _ in range(n))))
                best = max(best, tokens / (time.perf_counter() - t))
            out[n] = round(best, 1)
    return out


def main() -> None:
    kind = sys.argv[1] if len(sys.argv) > 1 else "wheel"
    if kind == "binary":
        proc, url = binary(Path(sys.argv[2]) if len(sys.argv) > 2 else BINARY)
        try:
            speed = asyncio.run(measure(url))
        finally:
            proc.terminate()
            proc.wait()
        name = "llama-server binary (native build)"
    else:
        server, url = wheel()
        speed = asyncio.run(measure(url))
        del server
        name = "xllamacpp wheel"
    print(json.dumps({"engine": name, "tok_s": speed}))


if __name__ == "__main__":
    main()
