"""`dragoman bench --hostile`: crafted texts against the request path, three ways.

1. Every pattern that sees request text or model output, on texts built from its own tree to
   make it backtrack (`redos.attacks`) at the longest text a server admits: each must finish
   well under a second (a quadratic pattern takes minutes there).
2. The request path on families of hostile texts, each sent alone to a real echo server (no
   model), as text and as HTML, against plain prose of the same length: within 2x.
3. A real echo server given the largest request it admits, made of those texts, while a second
   client asks /health and a short translation over and over: /health's p99 under 100 ms."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import httpx
from rich.console import Console

from dragoman.stats import percentile

SIZE = 100_000  # the server's default --max-text-chars
PATTERN_LIMIT_S = 1.0
RATIO_LIMIT = 2.0
HEALTH_P99_LIMIT_MS = 100.0
BODY_BYTES = 4 * 1024 * 1024  # the server's default --max-body-bytes
ROUNDS = 3


def families(size: int = SIZE) -> dict[str, str]:
    """Texts of `size` characters that the request path's patterns once took quadratic time
    or more on, or that stress what it does per character: long runs of what two neighbouring
    quantifiers both take, unclosed quotes and brackets, repeated separators, digit and flag
    runs, markup openers."""

    def run(unit: str, lead: str = "", tail: str = "") -> str:
        n = max(1, (size - len(lead) - len(tail)) // len(unit))
        return lead + unit * n + tail

    return {
        "printf zeros": run("0", "hello %", "z world"),
        "printf flags": run("-+#0", "%", "z"),
        "marker spaces": run(" ", "see <", "x"),
        "note spaces": run(" ", "Hello.\n\n", "(note"),
        "preamble spaces": run(" ", "Here is the translation", "x"),
        "unclosed quote": run("x", '<a title="', ""),
        "unclosed braces": run("{", "", "x"),
        "unclosed brackets": run("[", "", "x"),
        "template opener": run("a", "{{", ""),
        "repeated stops": run(". "),
        "repeated commas": run(", "),
        "hyphens": run("-"),
        "line breaks": run("\n", "a"),
        "digits": run("1"),
        "url": run("a", "http://", ""),
        "e-mail parts": run("a@"),
        "tag openers": run("<a "),
        "comment openers": run("<!--"),
        "tags": run("<b>"),
        "base64 run": run("aB3+", "key ", ""),
        "backticks": run("`", "a ", ""),
        "tiny sentences": run("Go! "),
    }


def plain(size: int = SIZE) -> str:
    """Ordinary prose of `size` characters: the workload's sentences joined."""
    from dragoman.eval import workloads

    items = workloads.build("ui", 2_000, 0)
    text = " ".join(i.text for i in items if i.source == "en")
    while len(text) < size:
        text += " " + text
    return text[:size]


def text_work(text: str, markup: bool) -> None:
    """What the request path does to one text besides the engine and the detector, in this
    process (the tests' guard): letters, the plan (segments, masks, markup), each unit's
    letters, the reply check and cleaning on identity replies, putting it back together."""
    from dragoman.engine.hygiene import clean_output
    from dragoman.errors import InvalidRequest
    from dragoman.service.documents import Sizes, TextOptions, plan
    from dragoman.service.translation import needs_translation
    from dragoman.service.validate import placeholders_broken

    needs_translation(text)
    options = TextOptions(markup="html") if markup else TextOptions()
    try:
        p = plan(text, "en", options, Sizes(300, 200))
    except InvalidRequest:  # refused (a 400), as markup nested past the limit is
        return
    # A repeated unit is asked once (`_each_once`) and is one engine request (coalesced).
    for unit in set(p.units):
        if needs_translation(unit):
            clean_output(unit, unit)
            placeholders_broken(unit, unit)
    p.assemble(list(p.units))
    clean_output(text, "")


def best_seconds(repeats: int, text: str, markup: bool) -> float:
    """The fastest of `repeats` runs of `text_work`."""
    best = float("inf")
    for _ in range(repeats):
        started = time.perf_counter()
        text_work(text, markup)
        best = min(best, time.perf_counter() - started)
    return best


def measure_patterns(size: int = SIZE) -> list[dict[str, Any]]:
    from dragoman.bench.redos import attacks, request_patterns, worst_seconds

    out = []
    for name, (pattern, anchored) in sorted(request_patterns().items()):
        took, text = worst_seconds(pattern, attacks(pattern, size), anchored)
        out.append({"pattern": name, "worst_s": took, "text_head": text[:24]})
    return out


async def measure_path(url: str, size: int = SIZE, repeats: int = 3) -> dict[str, Any]:
    """Each family, and plain prose of the same length, sent alone to a real echo server (no
    model: the answer's time is HTTP and the request path), as text and as HTML: the fastest
    of `repeats` each, and each family's ratio to plain text's."""
    texts = {"plain": plain(size), **families(size)}
    modes: dict[str, Any] = {}
    async with httpx.AsyncClient(base_url=url, timeout=600) as c:
        for mode in ("text", "html"):
            took: dict[str, float] = {}
            for name, text in texts.items():
                body = {"text": text, "source_lang": "en", "target_lang": "fr", "format": mode}
                best = float("inf")
                for _ in range(repeats):
                    started = time.perf_counter()
                    r = await c.post("/v1/translate", json=body)
                    best = min(best, time.perf_counter() - started)
                    if r.status_code != 200:
                        raise RuntimeError(f"{name} ({mode}): {r.status_code} {r.text[:300]}")
                took[name] = best
            base = took.pop("plain")
            rows = {n: {"seconds": t, "ratio": t / base} for n, t in took.items()}
            modes[mode] = {"plain_seconds": base, "families": rows}
    return modes


def largest_request(size: int = SIZE, body_bytes: int = BODY_BYTES) -> dict[str, Any]:
    """The largest /v1/translate body the server admits by default, made of the families
    (each text at the character limit) in turn, with plain text among them."""
    texts = [plain(size), *families(size).values()]
    body: dict[str, Any] = {"text": [], "source_lang": "en", "target_lang": "fr"}
    k = 0
    while len(body["text"]) < 64:
        candidate = {**body, "text": [*body["text"], texts[k % len(texts)]]}
        if len(json.dumps(candidate).encode()) > body_bytes - 4096:
            break
        body = candidate
        k += 1
    return body


async def measure_health(
    url: str, bodies: list[dict[str, Any]], clients: int = 1
) -> dict[str, Any]:
    """/health and a short translation asked in turn, one at a time, while `clients` send
    `bodies` between them (each client the next body left) until all are answered."""
    health: list[float] = []
    short: list[float] = []
    big: list[dict[str, Any]] = []
    refused: dict[int, int] = {}  # the short translations' answers (429: the place is taken)
    small = {"text": "Hello, world.", "source_lang": "en", "target_lang": "fr"}
    queue = list(reversed(bodies))
    async with httpx.AsyncClient(base_url=url, timeout=600) as c:
        done = asyncio.Event()

        async def probe() -> None:
            while not done.is_set():
                started = time.perf_counter()
                r = await c.get("/health")
                health.append(time.perf_counter() - started)
                r.raise_for_status()
                started = time.perf_counter()
                r = await c.post("/v1/translate", json=small)
                short.append(time.perf_counter() - started)
                refused[r.status_code] = refused.get(r.status_code, 0) + 1

        async def send() -> None:
            while queue:
                body = queue.pop()
                started = time.perf_counter()
                r = await c.post("/v1/translate", json=body)
                big.append({"status": r.status_code, "seconds": time.perf_counter() - started})

        prober = asyncio.create_task(probe())
        try:
            await asyncio.gather(*(send() for _ in range(clients)))
        finally:
            done.set()
        await prober
    seconds = [r["seconds"] for r in big]
    return {
        "texts": sum(len(b["text"]) if isinstance(b["text"], list) else 1 for b in bodies),
        "body_bytes": max(len(json.dumps(b).encode()) for b in bodies),
        "clients": clients,
        "requests": len(big),
        "statuses": sorted({r["status"] for r in big}),
        "request_p50_s": percentile(seconds, 50),
        "request_max_s": max(seconds, default=float("nan")),
        "health_probes": len(health),
        "health_p50_ms": 1000 * percentile(health, 50),
        "health_p99_ms": 1000 * percentile(health, 99),
        "health_max_ms": 1000 * max(health, default=float("nan")),
        "short_p50_ms": 1000 * percentile(short, 50),
        "short_p99_ms": 1000 * percentile(short, 99),
        "short_statuses": {str(k): v for k, v in sorted(refused.items())},
    }


def below_the_cut(requests: int = 400) -> list[dict[str, Any]]:
    """Requests of the most text that is still worked on the event loop (plain prose: the
    costliest text per character)."""
    from dragoman.service.textwork import CUT_IN_THREAD

    body = {"text": plain(CUT_IN_THREAD), "source_lang": "en", "target_lang": "fr"}
    return [body] * requests


def verdicts(out: dict[str, Any]) -> dict[str, bool]:
    """Each target met or not, from the figures alone."""
    patterns = out["patterns"]
    ratios = [r["ratio"] for m in out["path"].values() for r in m["families"].values()]
    runs = list(out["health"].values())
    return {
        "patterns": bool(patterns) and all(p["worst_s"] < PATTERN_LIMIT_S for p in patterns),
        "path": bool(ratios) and max(ratios) <= RATIO_LIMIT,
        "health": bool(runs)
        and all(
            h["health_probes"] > 0
            and h["health_p99_ms"] < HEALTH_P99_LIMIT_MS
            and h["statuses"] == [200]
            for h in runs
        ),
    }


def run_hostile(out_dir: Path, meta: dict[str, Any], console: Console) -> dict[str, Any]:
    from dragoman.bench.servers import launch_echo

    console.log("patterns: each one's worst adversarial text")
    patterns = measure_patterns()
    logs = out_dir / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    # No admission bound: the loop is measured here, not the refusals that keep it free.
    flags = ("--echo-delay", "0", "--cache-mib", "0", "--max-admitted", "0")
    server = launch_echo(logs, "en,fr", *flags)
    try:
        console.log("the request path: hostile families against plain text, one at a time")
        path = asyncio.run(measure_path(server.url))
        console.log("/health while the largest admitted request runs")
        largest = asyncio.run(measure_health(server.url, [largest_request()] * ROUNDS))
        console.log("/health while requests of the most text worked on the loop run")
        below = asyncio.run(measure_health(server.url, below_the_cut(), clients=4))
        health = {"largest request": largest, "below the thread cut": below}
    finally:
        server.stop()
    return {"size": SIZE, "patterns": patterns, "path": path, "health": health, "meta": meta}


def markdown(out: dict[str, Any]) -> str:
    met = verdicts(out)
    word = {True: "MET", False: "MISSED"}
    worst = max(out["patterns"], key=lambda p: p["worst_s"])
    lines = [
        f"# Hostile texts: {out['meta']['machine']}",
        "",
        f"Texts of {out['size']:,} characters. Reproduce: `dragoman bench --hostile --out DIR`.",
        "",
        f"- Patterns: {len(out['patterns'])} on the request path, the slowest "
        f"`{worst['pattern']}` at {1000 * worst['worst_s']:.1f} ms on its worst text "
        f"(target under {PATTERN_LIMIT_S:g} s each): **{word[met['patterns']]}**",
    ]
    for mode, m in out["path"].items():
        top = max(m["families"].items(), key=lambda kv: kv[1]["ratio"])
        lines.append(
            f"- Request path, {mode}: plain text {1000 * m['plain_seconds']:.1f} ms; the costliest "
            f"family `{top[0]}` {1000 * top[1]['seconds']:.1f} ms, {top[1]['ratio']:.2f}x"
        )
    lines.append(f"  (target within {RATIO_LIMIT:g}x of plain text): **{word[met['path']]}**")
    for what, h in out["health"].items():
        lines.append(
            f"- /health, {what} ({h['requests']} requests of {h['texts'] // h['requests']} "
            f"texts, up to {h['body_bytes']:,} bytes, {h['clients']} client(s); statuses "
            f"{h['statuses']}, p50 {h['request_p50_s']:.2f} s, max {h['request_max_s']:.2f} s): "
            f"{h['health_probes']} probes, p50 {h['health_p50_ms']:.1f} ms, p99 "
            f"{h['health_p99_ms']:.1f} ms, max {h['health_max_ms']:.1f} ms; a short translation "
            f"beside it p50 {h['short_p50_ms']:.1f} ms, p99 {h['short_p99_ms']:.1f} ms, "
            f"answers {h['short_statuses']}"
        )
    lines += [
        f"  (target /health p99 under {HEALTH_P99_LIMIT_MS:g} ms in each): "
        f"**{word[met['health']]}**",
        "",
        "| family (served alone) | text ms | ratio | html ms | ratio |",
        "|---|---:|---:|---:|---:|",
    ]
    text, html = out["path"]["text"]["families"], out["path"]["html"]["families"]
    for name in text:
        lines.append(
            f"| {name} | {1000 * text[name]['seconds']:.1f} | {text[name]['ratio']:.2f} | "
            f"{1000 * html[name]['seconds']:.1f} | {html[name]['ratio']:.2f} |"
        )
    lines += ["", "| pattern | worst ms |", "|---|---:|"]
    for p in sorted(out["patterns"], key=lambda p: -p["worst_s"]):
        lines.append(f"| `{p['pattern']}` | {1000 * p['worst_s']:.2f} |")
    return "\n".join(lines) + "\n"
