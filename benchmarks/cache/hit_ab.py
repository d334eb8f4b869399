"""A cache hit's round trip, two versions of dragoman paired in one run.

Two `dragoman serve --architecture echo` servers, one per source tree (a git worktree of each
commit), answer the same repeated /v1/translate request; the client alternates blocks of
requests between them, in turns (A B, B A, ...), so a host whose speed drifts (a shared VM's
does, by up to 2x over minutes) slows both alike. The ratio of their medians is the figure;
each one's absolute p50 is only as good as the host was during the run.

    git worktree add /tmp/before <commit>
    python benchmarks/cache/hit_ab.py /tmp/before/src src OUT [--rounds 20] [--block 200]
        [--route]

`--route` puts each tree's own `dragoman route` in front of its server and sends the requests
there: the proxy's cost and the hit's together. Writes OUT/hit-ab.json and OUT/hit-ab.md (with
`--route`: OUT/route-hit-ab.*). Traffic goes to 127.0.0.1 only.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import httpx

from dragoman.bench.servers import free_port
from dragoman.host import detect

BODY = {
    "text": "A repeated sentence is answered from the cache.",
    "source_lang": "en",
    "target_lang": "fr",
}


def start(src: Path, port: int, log: Path, backend: int | None = None) -> subprocess.Popen[bytes]:
    """A `dragoman serve` on the echo engine; with `backend`, a `dragoman route` in front of
    the server on that port."""
    if backend is None:
        cmd = [sys.executable, "-m", "dragoman", "serve", "--architecture", "echo"]
        cmd += ["--languages", "en,fr", "--echo-delay", "0", "--log-level", "warning"]
    else:
        cmd = [sys.executable, "-m", "dragoman", "route"]
        cmd += ["--backend-urls", f"http://127.0.0.1:{backend}"]
    cmd += ["--host", "127.0.0.1", "--port", str(port)]
    env = {**os.environ, "PYTHONPATH": str(src.resolve())}
    with log.open("wb") as out:
        return subprocess.Popen(cmd, env=env, stdout=out, stderr=subprocess.STDOUT)


async def ready(c: httpx.AsyncClient, deadline: float) -> None:
    while time.monotonic() < deadline:
        try:
            if (await c.get("/ready")).status_code == 200:
                return
        except httpx.TransportError:
            pass
        await asyncio.sleep(0.25)
    raise RuntimeError(f"{c.base_url} not ready in time")


def quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def run(
    a: Path, b: Path, out: Path, rounds: int, block: int, route: bool = False
) -> dict[str, object]:
    names = {"A": a, "B": b}
    ports = {k: free_port() for k in names}
    procs = {k: start(src, ports[k], out / f"serve-{k}.log") for k, src in names.items()}
    front = dict(ports)
    times: dict[str, list[float]] = {"A": [], "B": []}
    try:
        if route:
            for k, src in names.items():
                front[k] = free_port()
                procs[f"route-{k}"] = start(src, front[k], out / f"route-{k}.log", ports[k])
        direct = {k: httpx.AsyncClient(base_url=f"http://127.0.0.1:{p}") for k, p in ports.items()}
        clients = {k: httpx.AsyncClient(base_url=f"http://127.0.0.1:{p}") for k, p in front.items()}
        for c in [*direct.values(), *clients.values()]:
            await ready(c, time.monotonic() + 120)
            (await c.post("/v1/translate", json=BODY)).raise_for_status()  # now cached
        for r in range(rounds):
            for k in ("A", "B") if r % 2 == 0 else ("B", "A"):
                c = clients[k]
                for _ in range(block):
                    started = time.perf_counter()
                    (await c.post("/v1/translate", json=BODY)).raise_for_status()
                    times[k].append(time.perf_counter() - started)
        hits = {}
        for k, c in direct.items():  # the server's own count (the route has its own metrics)
            metrics = (await c.get("/metrics")).text
            hits[k] = sum(
                float(line.split()[-1])
                for line in metrics.splitlines()
                if line.startswith('dragoman_cache_hits_total{level="local"} ')
            )
            await c.aclose()
        for c in clients.values():
            await c.aclose()
    finally:
        for p in procs.values():
            p.terminate()
            p.wait(30)
    summary = {
        k: {
            "source": str(names[k]),
            "requests": len(v),
            "cache_hits": hits[k],
            "p50_ms": 1000 * statistics.median(v),
            "p10_ms": 1000 * quantile(v, 0.10),
            "p90_ms": 1000 * quantile(v, 0.90),
            "min_ms": 1000 * min(v),
        }
        for k, v in times.items()
    }
    host = detect()
    return {
        "machine": host.label(),
        "host": host.as_dict(),
        "rounds": rounds,
        "block": block,
        "route": route,
        "runs": summary,
        "ratio_p50_b_over_a": statistics.median(times["B"]) / statistics.median(times["A"]),
    }


def markdown(result: dict[str, object]) -> str:
    runs: dict[str, dict[str, float]] = result["runs"]  # type: ignore[assignment]
    lines = [
        f"Host: {result['machine']}; {result['rounds']} rounds of {result['block']} requests "
        f"to each {'route (in front of its server)' if result.get('route') else 'server'}, "
        "in turns.",
        "",
        "| server | source | requests | hits | p10 ms | p50 ms | p90 ms |",
        "|---|---|---|---|---|---|---|",
    ]
    for k, r in runs.items():
        lines.append(
            f"| {k} | `{r['source']}` | {r['requests']} | {r['cache_hits']:g} | "
            f"{r['p10_ms']:.2f} | {r['p50_ms']:.2f} | {r['p90_ms']:.2f} |"
        )
    lines.append("")
    lines.append(f"B/A of the p50s: {result['ratio_p50_b_over_a']:.3f}")
    return "\n".join(lines) + "\n"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("a", type=Path, help="source tree A (its src folder)")
    p.add_argument("b", type=Path, help="source tree B (its src folder)")
    p.add_argument("out", type=Path)
    p.add_argument("--rounds", type=int, default=20)
    p.add_argument("--block", type=int, default=200)
    p.add_argument("--route", action="store_true", help="through each tree's dragoman route")
    args = p.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    result = asyncio.run(run(args.a, args.b, args.out, args.rounds, args.block, args.route))
    name = "route-hit-ab" if args.route else "hit-ab"
    (args.out / f"{name}.json").write_text(json.dumps(result, indent=1) + "\n")
    (args.out / f"{name}.md").write_text(markdown(result))
    print(markdown(result))


if __name__ == "__main__":
    main()
