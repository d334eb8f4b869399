"""`dragoman bench --soak`: a server under mixed traffic for minutes, its memory and open file
descriptors sampled, to show they do not grow. The same traffic drives tests/router/test_soak.py
for a minute.

The server is the echo architecture (no model: thousands of requests a minute through every
path of our own code) with a small admission bound, keys on, a small translation cache that
every new text passes through (it fills, then keeps evicting), and small input limits, so each
round of traffic has successes, refusals (413, 422, 400, 401, 429), deadlines (504) and
clients that leave mid-request. Memory and descriptors are sampled with no client connected
(after the server has closed every connection), so a reading is not the number of sockets a
pool happens to hold at that instant."""

from __future__ import annotations

import asyncio
import itertools
import os
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import httpx
import psutil
from rich.console import Console

from dragoman.bench.servers import Launched, engine_flags, launch_dragoman, launch_echo
from dragoman.bench.settings import BenchSettings
from dragoman.service.keys import hash_key

KEY = "dm-soak-key"
ECHO_DELAY = 0.05  # seconds each admitted text is held: long enough to leave mid-request
BOUND = 8  # texts admitted at once; a round sends more
MAX_TEXT_CHARS = 1000
MAX_BODY_BYTES = 16 * 1024
HIGH = str(10**9)  # per-key limits on, never reached: their bookkeeping runs on every request
CACHE_MIB = 1  # the translation cache on and small: it fills early and evicts from then on
SENTENCES = (
    "The museum opens at nine in the morning.",
    "Please close the window before you leave.",
    "Our train was delayed by twenty minutes.",
)


def soak_flags(keys: Path) -> list[str]:
    """The server's limits, keys and cache: the same for either engine."""
    return [
        "--max-admitted",
        str(BOUND),
        "--max-items",
        str(BOUND),
        "--max-text-chars",
        str(MAX_TEXT_CHARS),
        "--max-body-bytes",
        str(MAX_BODY_BYTES),
        "--cache-mib",
        str(CACHE_MIB),
        "--api-keys-file",
        str(keys),
        "--key-requests-per-minute",
        HIGH,
        "--key-chars-per-minute",
        HIGH,
        "--key-chars-per-day",
        HIGH,
    ]


def launch_soak_server(log_dir: Path, s: BenchSettings | None = None) -> Launched:
    """The soak's server: echo unless the settings ask for the real engine."""
    keys = log_dir / "soak-keys"
    keys.write_text(f"{hash_key(KEY)} soak\n")
    keys.chmod(0o600)
    if s is None or s.soak_engine == "echo":
        return launch_echo(log_dir, "en,fr", "--echo-delay", str(ECHO_DELAY), *soak_flags(keys))
    # The bench's engine flags switch the cache off; the soak wants it on (it fills and evicts).
    flags = engine_flags(s)
    at = flags.index("--cache-mib")
    del flags[at : at + 2]
    return launch_dragoman(log_dir, *flags, "--log-level", "warning", *soak_flags(keys))


@dataclass
class Sample:
    t: float  # seconds since the soak began
    rss_mib: float
    fds: int
    requests: int  # sent so far
    settled: bool  # taken with no client connection open


def sample(pid: int, t: float, requests: int, settled: bool) -> Sample:
    """RSS and open descriptors of the server's process tree."""
    root = psutil.Process(pid)
    rss, fds = 0, 0
    for p in [root, *root.children(recursive=True)]:
        try:
            rss += p.memory_info().rss
            fds += len(os.listdir(f"/proc/{p.pid}/fd"))
        except (psutil.Error, FileNotFoundError):
            continue
    return Sample(round(t, 2), round(rss / 2**20, 1), fds, requests, settled)


async def settle(pid: int, within: float = 10.0) -> bool:
    """Wait until the server holds no connection but its listening socket (or `within` s: a
    server that never closes its clients' sockets then shows it in its descriptor count)."""
    end = time.monotonic() + within
    proc = psutil.Process(pid)
    while time.monotonic() < end:
        if all(c.status == psutil.CONN_LISTEN for c in proc.net_connections(kind="tcp")):
            return True
        await asyncio.sleep(0.05)
    return False


_serial = itertools.count()


def _text() -> str:
    """A text never sent before: each one misses the cache and goes to the engine (and into
    the cache, which then keeps evicting)."""
    n = next(_serial)
    return f"{SENTENCES[n % len(SENTENCES)]} ({n})"


def _body(n: int = 1) -> dict[str, Any]:
    text: str | list[str] = _text() if n == 1 else [_text() for _ in range(n)]
    return {"text": text, "source_lang": "en", "target_lang": "fr"}


def _nested(depth: int) -> bytes:
    return b'{"text": ' + b"[" * depth + b'"x"' + b"]" * depth + b"}"


async def _one(c: httpx.AsyncClient, kind: str) -> str:
    """One request of the mix; the outcome is its status, `left` for a client that hung up on
    purpose, or `error:<type>` for anything that went wrong on the way."""
    auth = {"Authorization": f"Bearer {KEY}"}
    json_type = {"Content-Type": "application/json", **auth}
    req: dict[str, Any] = {"json": _body(), "headers": auth}
    if kind == "list":
        req["json"] = _body(BOUND)
    elif kind == "body_too_large":
        req = {"content": b'{"text": "' + b"x" * MAX_BODY_BYTES + b'"}', "headers": json_type}
    elif kind == "too_many_items":
        req["json"] = _body(BOUND + 1)
    elif kind == "text_too_long":
        req["json"] = {**_body(), "text": "word " * (MAX_TEXT_CHARS // 4)}
    elif kind == "invalid":
        req["json"] = {"text": "no target"}
    elif kind == "bad_json":
        req = {"content": b'{"text": "broken', "headers": json_type}
    elif kind == "too_deep":
        req = {"content": _nested(64), "headers": json_type}
    elif kind == "no_key":
        req["headers"] = {}
    elif kind == "bad_key":
        req["headers"] = {"Authorization": "Bearer not-a-key"}
    elif kind == "deadline":
        req["headers"] = {**auth, "X-Request-Timeout": str(ECHO_DELAY / 5)}
    elif kind == "leave":
        # The request is sent whole, then the client stops waiting while the server holds it.
        req["timeout"] = httpx.Timeout(30.0, read=ECHO_DELAY / 2)
    try:
        if kind == "ready":
            r = await c.get("/ready")
        else:
            r = await c.post("/v1/translate", **req)
    except httpx.ReadTimeout:
        return "left" if kind == "leave" else "error:ReadTimeout"
    except httpx.HTTPError as exc:
        return f"error:{type(exc).__name__}"
    return str(r.status_code)


# One round, sent at once: more texts than the bound (so some are refused), every refusal
# before parsing and after, and clients that leave.
ROUND = (
    ["ok"] * 12
    + ["list"] * 2
    + ["leave"] * 2
    + [
        "body_too_large",
        "too_many_items",
        "text_too_long",
        "invalid",
        "bad_json",
        "too_deep",
        "no_key",
        "bad_key",
        "deadline",
        "ready",
    ]
)


async def soak(
    url: str,
    pid: int,
    seconds: float,
    max_rounds: int,
    warmup_rounds: int = 30,
    sample_every: float = 5.0,
    on_sample: Callable[[Sample], None] | None = None,
) -> dict[str, Any]:
    """Warm up, sample with no client connected, send rounds for `seconds` (at most
    `max_rounds`), sampling under load every `sample_every` s, then sample settled again."""
    outcomes: Counter[str] = Counter()
    series: list[Sample] = []
    sent = 0
    t0 = time.perf_counter()

    def record(s: Sample) -> None:
        series.append(s)
        if on_sample is not None:
            on_sample(s)

    async def rounds(n: int, until: float) -> int:
        nonlocal sent
        done = 0
        next_sample = time.perf_counter() + sample_every
        limits = httpx.Limits(max_connections=len(ROUND) + 4)
        async with httpx.AsyncClient(base_url=url, timeout=30, limits=limits) as c:
            while done < n and time.perf_counter() < until:
                outcomes.update(await asyncio.gather(*(_one(c, k) for k in ROUND)))
                sent += len(ROUND)
                done += 1
                if time.perf_counter() >= next_sample:
                    record(sample(pid, time.perf_counter() - t0, sent, False))
                    next_sample += sample_every
        return done

    await rounds(warmup_rounds, float("inf"))
    warm_outcomes = Counter(outcomes)
    settled = await settle(pid)
    baseline = sample(pid, time.perf_counter() - t0, sent, settled)
    record(baseline)
    ran = await rounds(max_rounds, time.perf_counter() + seconds)
    settled = await settle(pid)
    final = sample(pid, time.perf_counter() - t0, sent, settled)
    record(final)
    return {
        "warmup_rounds": warmup_rounds,
        "rounds": ran,
        "requests": sent,
        "round": ROUND,
        "outcomes": dict(sorted(outcomes.items())),
        "warmup_outcomes": dict(sorted(warm_outcomes.items())),
        "baseline": asdict(baseline),
        "final": asdict(final),
        "rss_growth_mib": round(final.rss_mib - baseline.rss_mib, 1),
        "fd_growth": final.fds - baseline.fds,
        "series": [asdict(s) for s in series],
    }


def run_soak(s: BenchSettings, console: Console) -> dict[str, Any]:
    from dragoman.bench.runner import host_meta

    logs = s.out / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    server = launch_soak_server(logs, s)

    def show(x: Sample) -> None:
        console.log(f"{x.t:.0f} s: {x.requests} requests, RSS {x.rss_mib} MiB, {x.fds} fds")

    try:
        out = asyncio.run(
            soak(server.url, server.pid, s.soak_seconds, 10**9, sample_every=10, on_sample=show)
        )
    finally:
        server.stop()
    out["meta"] = {
        **host_meta(s),
        "seconds": s.soak_seconds,
        "engine": s.soak_engine,
        "model": s.model,
        "echo_delay": ECHO_DELAY,
    }
    return out


def markdown(out: dict[str, Any]) -> str:
    b, f = out["baseline"], out["final"]
    engine = out["meta"].get("engine", "echo")
    server = (
        f"Echo server (echo delay {ECHO_DELAY:g} s a text)"
        if engine == "echo"
        else f"Real-engine server ({out['meta'].get('model', 'the default model')})"
    )
    seconds = f["t"] - b["t"]
    outcomes = ", ".join(f"{k}: {v}" for k, v in out["outcomes"].items())
    lines = [
        f"# Soak: {out['meta']['machine']}",
        "",
        f"{server} (admission bound {BOUND}, keys on, a "
        f"{CACHE_MIB} MiB translation cache and every text new), "
        f"{out['rounds']} rounds of {len(out['round'])} requests at once over {seconds:.0f} s "
        f"after {out['warmup_rounds']} rounds of warm-up: {out['requests']} requests in all.",
        "",
        f"Outcomes: {outcomes}.",
        "",
        "| | seconds | requests sent | RSS MiB | open fds |",
        "|---|---|---|---|---|",
        f"| after warm-up, no client connected | {b['t']:.0f} | {b['requests']} "
        f"| {b['rss_mib']} | {b['fds']} |",
        f"| at the end, no client connected | {f['t']:.0f} | {f['requests']} "
        f"| {f['rss_mib']} | {f['fds']} |",
        "",
        f"Growth: RSS {out['rss_growth_mib']:+.1f} MiB, descriptors {out['fd_growth']:+d}.",
        "",
        "Under load (client connections open, so descriptors include them):",
        "",
        "| seconds | requests sent | RSS MiB | open fds |",
        "|---|---|---|---|",
        *(
            f"| {x['t']:.0f} | {x['requests']} | {x['rss_mib']} | {x['fds']} |"
            for x in out["series"]
            if not x["settled"]
        ),
        "",
    ]
    return "\n".join(lines)
