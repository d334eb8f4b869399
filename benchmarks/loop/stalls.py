"""How long a huge cold request holds the event loop of an echo-engine server: a client polls
`/ready` every ~10 ms (and one more a tiny translation, also every ~10 ms) while one huge
request runs, and each poll's latency is kept; inside the server, `gc.callbacks` times every
garbage collection, so the full ones (generation 2) that fell during the request are counted
with their durations.

Workloads (each round's texts are new, so nothing comes from the cache): `text` one plain text
of 100,000 characters, `html` a list of 64 HTML pages of 60 KB (`pages`: 8 of them, for long
runs watching memory); each with its source given (`en`) or detected (`auto`). Variants are
servers, each `NAME=SRC [serve flags...]`: `dragoman serve --architecture echo` run from the
source tree SRC (its PYTHONPATH); a flag `thresholds=A,B,C` puts a candidate in place of
`dragoman.heap.THRESHOLDS`. Rounds alternate the variants (one server each, all up for the
whole run), so a host whose speed drifts moves them alike.

The measurement of 2026-11-27 (benchmarks/README.md, Garbage-collection pauses), the tree
before the change exported with `git archive cf43f0c src | tar -x -C /tmp/old`:

    python benchmarks/loop/stalls.py benchmarks/results/loop-stalls-avx512bf16-2core \
        --rounds 3 --variant "before=/tmp/old/src" --variant "t5000=src" \
        --variant "t2000=src thresholds=2000,10,100"

Writes OUT/stalls.json (every round's raw figures) and OUT/stalls.md; OUT/cpu-flags.txt has
the host's AVX-512 and AMX flags; OUT/gc-NAME.log (every collection of a server) and
OUT/server-NAME.log stay out of the repository (`--collector OUT` tabulates the former again).
Servers bind 127.0.0.1 and stop with the run.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import re
import shlex
import signal
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx

POLL_EVERY = 0.010

SENTENCES = [
    "The service keeps every setting you change for thirty days before it removes old copies.",
    "Click the button below to confirm your address and finish the registration.",
    "Our team will answer your message within two working days, usually sooner.",
    "If the download does not start, check your connection and try again later.",
    "Each invoice lists the items you ordered, their prices and the taxes you paid.",
    "You can change the language of the interface in the settings of your account.",
]

BLOCK = (
    '<p>Click <a href="/settings" class="btn">the <b>Save</b> button</a> to keep your '
    "changes &amp; settings. {n} items were updated.</p>"
    "<ul><li>First <i>item</i></li><li>Second item with the name {n}</li></ul>"
    '<img src="x.png" alt="A picture {n}"><pre><code>make install</code></pre>'
)


def plain(size: int, salt: str) -> str:
    parts: list[str] = []
    n = 0
    while sum(map(len, parts)) < size:
        parts.append(f"{SENTENCES[n % len(SENTENCES)][:-1]} ({salt} {n}).")
        n += 1
        if n % 8 == 0:
            parts.append("\n\n")
    return " ".join(parts)[:size].rsplit(" ", 1)[0] + "."


def page(size: int, salt: str) -> str:
    parts: list[str] = []
    while sum(map(len, parts)) < size:
        parts.append(BLOCK.replace("{n}", f"{salt}-{len(parts)}"))
    return "<div>" + "".join(parts) + "</div>"


def body(workload: str, source: str, salt: str) -> dict[str, Any]:
    if workload == "text":
        return {"text": plain(100_000, salt), "source_lang": source, "target_lang": "fr"}
    count = 64 if workload == "html" else 8  # "pages": a lighter one, for long runs
    pages = [page(60_000, f"{salt}p{i}") for i in range(count)]
    return {"text": pages, "source_lang": source, "target_lang": "fr", "format": "html"}


# --- inside the server ------------------------------------------------------------------------


def hooked_serve(log: str, args: list[str]) -> int:
    """Run `dragoman <args>` with every garbage collection timed into `log`, one line each:
    `monotonic_start generation seconds collected`."""
    fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_APPEND, 0o644)
    started = 0.0

    def callback(phase: str, info: dict[str, int]) -> None:
        nonlocal started
        if phase == "start":
            started = time.monotonic()
        else:
            took = time.monotonic() - started
            line = f"{started:.6f} {info['generation']} {took:.6f} {info['collected']}\n"
            os.write(fd, line.encode())

    gc.callbacks.append(callback)
    if os.environ.get("STALLS_THRESHOLDS"):  # a candidate in place of dragoman.heap's
        import dragoman.heap

        wanted = tuple(int(x) for x in os.environ["STALLS_THRESHOLDS"].split(","))
        dragoman.heap.THRESHOLDS = wanted  # type: ignore[assignment]
    from dragoman.cli import main

    return main(args)


# --- the client -------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Server:
    def __init__(self, name: str, spec: str, out: Path) -> None:
        src, *flags = shlex.split(spec)
        thresholds = [f.split("=", 1)[1] for f in flags if f.startswith("thresholds=")]
        flags = [f for f in flags if not f.startswith("thresholds=")]
        self.name, self.src, self.flags = name, str(Path(src).resolve()), flags
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.gc_log = out / f"gc-{name}.log"
        self.log = out / f"server-{name}.log"
        cmd = [
            sys.executable,
            __file__,
            "--hooked-serve",
            str(self.gc_log),
            "--",
            "serve",
            "--architecture",
            "echo",
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--cache-mib",
            "0",
            "--log-level",
            "warning",
            "--max-admitted",  # room for the polls beside the huge request's 64 places
            "1000",
            *flags,
        ]
        env = {**os.environ, "PYTHONPATH": self.src}
        if thresholds:
            env["STALLS_THRESHOLDS"] = thresholds[0]
        with self.log.open("wb") as log:
            self.process = subprocess.Popen(
                cmd, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True
            )

    def wait_ready(self, timeout: float = 180.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"{self.name} exited: {self.log.read_text()[-2000:]}")
            try:
                if httpx.get(self.url + "/ready", timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        raise RuntimeError(f"{self.name} not ready in {timeout} s")

    def rss_mib(self) -> float:
        status = Path(f"/proc/{self.process.pid}/status").read_text()
        match = re.search(r"VmRSS:\s+(\d+) kB", status)
        return int(match.group(1)) / 1024 if match else float("nan")

    def collections(self, since: float, until: float) -> list[tuple[float, int, float]]:
        out = []
        for line in self.gc_log.read_text().splitlines():
            at, generation, took, _ = line.split()
            if since <= float(at) <= until:
                out.append((float(at), int(generation), float(took)))
        return out

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()


async def poll(
    client: httpx.AsyncClient, method: str, path: str, done: asyncio.Event
) -> list[float]:
    """Latencies (s) of one request after another, started every POLL_EVERY, until `done`."""
    latencies: list[float] = []
    tiny = {"text": "Hello there.", "source_lang": "en", "target_lang": "fr"}
    while not done.is_set():
        started = time.perf_counter()
        if method == "GET":
            r = await client.get(path)
        else:
            r = await client.post(path, json=tiny)
        latencies.append(time.perf_counter() - started)
        r.raise_for_status()
        await asyncio.sleep(max(0.0, POLL_EVERY - (time.perf_counter() - started)))
    return latencies


def send_huge(url: str, payload: Path) -> tuple[int, float]:
    """The huge request from its own process (curl), so its JSON and its 4 MB of sending
    are not this client's work."""
    started = time.perf_counter()
    out = subprocess.run(
        [
            "curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "-H",
            "content-type: application/json", "--data-binary", f"@{payload}",
            url + "/v1/translate",
        ],
        capture_output=True, text=True, check=True, timeout=600,
    )  # fmt: skip
    return int(out.stdout), time.perf_counter() - started


async def one(server: Server, workload: str, source: str, salt: str, out: Path) -> dict[str, Any]:
    payload = out / f"payload-{server.name}.json"
    payload.write_text(json.dumps(body(workload, source, salt)))
    async with httpx.AsyncClient(base_url=server.url, timeout=60) as client:
        await client.get("/ready")  # a connection each, open before the clock starts
        done = asyncio.Event()
        ready = asyncio.create_task(poll(client, "GET", "/ready", done))
        async with httpx.AsyncClient(base_url=server.url, timeout=60) as tiny_client:
            await tiny_client.get("/ready")
            tiny = asyncio.create_task(poll(tiny_client, "POST", "/v1/translate", done))
            since = time.monotonic()
            status, seconds = await asyncio.to_thread(send_huge, server.url, payload)
            until = time.monotonic()
            done.set()
            ready_s, tiny_s = await ready, await tiny
    payload.unlink()
    full = [c for c in server.collections(since, until) if c[1] == 2]
    return {
        "variant": server.name,
        "workload": workload,
        "source": source,
        "status": status,
        "request_s": round(seconds, 3),
        "ready_ms": [round(1000 * x, 2) for x in ready_s],
        "tiny_ms": [round(1000 * x, 2) for x in tiny_s],
        "gen2_ms": [round(1000 * c[2], 2) for c in full],
        "rss_mib_after": round(server.rss_mib(), 1),
    }


def p99(xs: list[float]) -> float:
    if len(xs) < 2:
        return xs[0] if xs else 0.0
    return statistics.quantiles(xs, n=100, method="inclusive")[98]


def summarise(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    rows = []
    keys = sorted({(r["workload"], r["source"], r["variant"]) for r in records})
    for workload, source, variant in keys:
        rs = [
            r
            for r in records
            if (r["workload"], r["source"], r["variant"]) == (workload, source, variant)
        ]
        ready = [x for r in rs for x in r["ready_ms"]]
        tiny = [x for r in rs for x in r["tiny_ms"]]
        gen2 = [x for r in rs for x in r["gen2_ms"]]
        rows.append(
            {
                "workload": workload,
                "source": source,
                "variant": variant,
                "rounds": len(rs),
                "request_s_median": statistics.median(r["request_s"] for r in rs),
                "ready_max_ms": max(ready),
                "ready_p99_ms": round(p99(ready), 2),
                "tiny_max_ms": max(tiny),
                "tiny_p99_ms": round(p99(tiny), 2),
                "gen2_per_request": round(len(gen2) / len(rs), 2),
                "gen2_max_ms": max(gen2, default=0.0),
                "gen2_total_ms_per_request": round(sum(gen2) / len(rs), 1),
            }
        )
    return rows


def table(rows: list[dict[str, Any]]) -> str:
    head = (
        "| workload | source | variant | rounds | request s (median) | /ready max ms | "
        "/ready p99 ms | tiny max ms | tiny p99 ms | gen-2 per request | gen-2 max ms | "
        "gen-2 ms per request |\n|" + "---|" * 12
    )
    lines = [head]
    for r in rows:
        lines.append(
            f"| {r['workload']} | {r['source']} | {r['variant']} | {r['rounds']} | "
            f"{r['request_s_median']:.2f} | {r['ready_max_ms']:.1f} | {r['ready_p99_ms']:.1f} | "
            f"{r['tiny_max_ms']:.1f} | {r['tiny_p99_ms']:.1f} | {r['gen2_per_request']:g} | "
            f"{r['gen2_max_ms']:.1f} | {r['gen2_total_ms_per_request']:.1f} |"
        )
    return "\n".join(lines) + "\n"


def collector(out: Path) -> str:
    """Every collection each server made over the whole run (start-up included), from its
    OUT/gc-NAME.log, by generation: how many, their time, and the objects they freed."""
    lines = [
        "| variant | generation | collections | total ms | p50 ms | p99 ms | max ms | freed |",
        "|" + "---|" * 8,
    ]
    for log in sorted(out.glob("gc-*.log")):
        rows = [line.split() for line in log.read_text().splitlines()]
        for generation in ("0", "1", "2"):
            took = sorted(1000 * float(r[2]) for r in rows if r[1] == generation)
            freed = sum(int(r[3]) for r in rows if r[1] == generation)
            if not took:
                continue
            p50, p99 = took[len(took) // 2], took[min(len(took) - 1, int(len(took) * 0.99))]
            lines.append(
                f"| {log.stem[3:]} | {generation} | {len(took)} | {sum(took):.0f} | {p50:.2f} | "
                f"{p99:.2f} | {took[-1]:.1f} | {freed} |"
            )
    return "\n".join(lines) + "\n"


def cpu_flags() -> str:
    flags = re.findall(r"avx512[a-z_0-9]*|amx[a-z_0-9]*", Path("/proc/cpuinfo").read_text())
    return "\n".join(sorted(set(flags))) + "\n"


def _dump(out: dict[str, Any]) -> str:
    """Meta and summary readable; each record (thousands of raw figures) on one line."""
    records = ",\n  ".join(json.dumps(r) for r in out["records"])
    head = {k: v for k, v in out.items() if k != "records"}
    return json.dumps(head, indent=1)[:-2] + f',\n "records": [\n  {records}\n ]\n}}\n'


def main() -> None:
    if len(sys.argv) > 2 and sys.argv[1] == "--hooked-serve":
        sys.exit(hooked_serve(sys.argv[2], sys.argv[4:]))
    if len(sys.argv) > 2 and sys.argv[1] == "--collector":  # again, from a run's logs
        print(collector(Path(sys.argv[2])), end="")
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--variant", action="append", required=True, help="NAME=SRC [flags]")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--workloads", default="text:en,text:auto,html:en,html:auto")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "cpu-flags.txt").write_text(cpu_flags())
    gc.disable()  # this client's own collections would show as the server's latency
    servers = [Server(*v.split("=", 1), args.out) for v in args.variant]
    records: list[dict[str, Any]] = []
    try:
        for s in servers:
            s.wait_ready()
        rss_start = {s.name: s.rss_mib() for s in servers}
        workloads = [tuple(w.split(":")) for w in args.workloads.split(",")]
        for round_ in range(args.rounds):
            for workload, source in workloads:
                order = servers if round_ % 2 == 0 else servers[::-1]
                for s in order:
                    salt = f"r{round_}{s.name}"
                    record = asyncio.run(one(s, workload, source, salt, args.out))
                    record["round"] = round_
                    records.append(record)
                    print(
                        f"round {round_} {workload}:{source} {s.name}: {record['status']} "
                        f"{record['request_s']} s, /ready max {max(record['ready_ms']):.1f} ms, "
                        f"gen-2 {record['gen2_ms']} ms, RSS {record['rss_mib_after']} MiB",
                        flush=True,
                    )
                    gc.collect()
    finally:
        for s in servers:
            s.stop()
    rows = summarise(records)
    meta = {
        "host_flags": cpu_flags().split(),
        "cpus": os.cpu_count(),
        "python": sys.version.split()[0],
        "variants": args.variant,
        "rss_mib_start": rss_start,
        "poll_every_s": POLL_EVERY,
    }
    (args.out / "stalls.json").write_text(
        _dump({"meta": meta, "summary": rows, "records": records})
    )
    rss = "".join(
        f"- {s.name}: RSS {rss_start[s.name]:.0f} MiB at the start, after each request "
        + ", ".join(f"{r['rss_mib_after']:.0f}" for r in records if r["variant"] == s.name)
        + "\n"
        for s in servers
    )
    (args.out / "stalls.md").write_text(
        f"Host flags: {', '.join(meta['host_flags']) or 'none'}; {meta['cpus']} CPUs; "
        f"Python {meta['python']}.\n\n{table(rows)}\n{rss}\nThe servers' garbage collections "
        f"over the whole run:\n\n{collector(args.out)}"
    )
    print(table(rows))


if __name__ == "__main__":
    main()
