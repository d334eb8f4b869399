"""Where the Ray Serve path's latency goes, hop by hop, with one client on an idle app: a
trivial Serve deployment (the proxy's floor), dragoman's app alone (/health: proxy + the app,
no model call) and a translation (echo engine; layout split: proxy + ingress + model replica;
layout whole: proxy + one replica holding app and engine). Run with `dragoman deploy ray`'s
settings (fast path, HAProxy ingress) in both layouts, with Serve's Python proxy in both, and
with Ray's defaults in the split one.

    .venv/bin/python benchmarks/ray/hops.py > benchmarks/results/ray-avx512bf16-2core/hops.md
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time

import httpx

BODY = {"text": "hello world", "source_lang": "en", "target_lang": "fr"}


def p50_ms(url: str, body: dict[str, str] | None = None, n: int = 300) -> float:
    with httpx.Client(timeout=30) as client:
        send = (lambda: client.post(url, json=body)) if body else (lambda: client.get(url))
        for _ in range(20):
            send()
        times = []
        for _ in range(n):
            started = time.perf_counter()
            r = send()
            times.append(time.perf_counter() - started)
            r.raise_for_status()
    return 1000 * statistics.median(times)


def measure(fast_path: bool, ingress: str, layout: str) -> list[float]:
    """In a fresh process: Serve's constants are read once, at import."""
    from dragoman.deploy.ray.settings import RaySettings

    os.environ.update(RaySettings(fast_path=fast_path, ray_ingress=ingress).cluster_env())
    import ray
    from ray import serve

    from dragoman.bench.servers import free_port
    from dragoman.deploy.ray.app import build_application

    @serve.deployment(max_ongoing_requests=100)
    class Trivial:
        async def __call__(self, request: object) -> str:
            return "hi"

    ray.init(num_cpus=4, include_dashboard=False, object_store_memory=200 * 2**20)
    port = free_port()
    serve.start(http_options={"host": "127.0.0.1", "port": port})
    base = f"http://127.0.0.1:{port}"
    try:
        serve.run(Trivial.bind(), name="trivial", route_prefix="/trivial")
        settings = RaySettings(
            architecture="echo", languages=["en", "fr"], cache_mib=0, ray_layout=layout
        )
        serve.run(build_application(settings), name="dragoman", route_prefix="/")
        return [
            p50_ms(f"{base}/trivial"),
            p50_ms(f"{base}/health"),
            p50_ms(f"{base}/v1/translate", BODY),
        ]
    finally:
        serve.shutdown()
        ray.shutdown()


def main() -> None:
    if len(sys.argv) > 3:
        values = measure(sys.argv[1] == "fast", sys.argv[2], sys.argv[3])
        print(" ".join(f"{v:.2f}" for v in values))
        return
    print(
        "| Ray settings | ingress | layout | trivial deployment | app /health "
        "| /v1/translate (echo) |"
    )
    print("|---|---|---|---|---|---|")
    runs = [
        ("fast", "haproxy", "whole"),
        ("fast", "haproxy", "split"),
        ("fast", "proxy", "whole"),
        ("fast", "proxy", "split"),
        ("default", "proxy", "split"),
    ]
    for mode, ingress, layout in runs:
        out = subprocess.run(
            [sys.executable, __file__, mode, ingress, layout],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split()
        label = "fast path" if mode == "fast" else "Ray's defaults"
        row = f"| {label} | {ingress} | {layout} | "
        print(row + " | ".join(f"{v} ms" for v in out[-3:]) + " |", flush=True)
    print(
        "\np50 of 300 sequential requests, one client, after 20 to warm up; idle app. "
        "`dragoman deploy ray`'s defaults: fast path, haproxy ingress."
    )


if __name__ == "__main__":
    main()
