"""`dragoman bench --candidates-cost`: what candidates (service/candidates.py) cost a request,
each comparison paired within one run against one server: its defaults with the cache off
(every request is engine work), or the one at --url.

One client: each of --candidates-texts texts is sent once in each mode, in an order rotated
from text to text so the modes share the places in the sequence: greedy (`candidates: 1`),
auto (no field: the server's --candidates) and best (`quality: best`). Then 16 clients, closed
loop, in blocks of --candidates-block requests: greedy, auto, greedy, auto on texts A, B, B, A.
The texts are --workload's (variable: 10-200 tokens), English to French, German and Spanish.
/v1/info's `candidates` (the probe's step times, how often each k was used) is read before
and after."""

from __future__ import annotations

import asyncio
import dataclasses
import math
import statistics
import time
from collections.abc import Sequence
from typing import Any

import httpx
from rich.console import Console

from dragoman.bench.loadgen import Record, closed_loop
from dragoman.bench.settings import BenchSettings
from dragoman.bench.stats import summarise
from dragoman.bench.targets import DragomanTarget
from dragoman.eval import workloads
from dragoman.eval.workloads import Item
from dragoman.stats import percentile

MODES: dict[str, dict[str, Any]] = {
    "greedy": {"candidates": 1},
    "auto": {},
    "best": {"quality": "best"},
}
"""Each mode's fields in a request's body."""
TARGETS = ("fr", "de", "es")
CLIENTS = 16
BLOCKS = ("greedy", "auto", "greedy", "auto")
BLOCK_SECONDS = 1800.0
"""The most a block or a request may take (a bound: blocks end at their request count)."""
PROBE_SECONDS = 600.0
"""The most to wait for the server's start-up probe (`candidates = auto`) to finish."""

# The targets, as ratios to greedy's figure in the same run: one client's p50 of auto and of
# best at most, 16 clients' translations/s of auto at least, their p99 of auto at most.
ONE_AUTO_P50, ONE_BEST_P50, MANY_AUTO_RATE, MANY_AUTO_P99 = 1.1, 2.0, 0.95, 1.1


def texts(workload: str, n: int, seed: int) -> list[Item]:
    """`n` distinct texts of `workload` (identical texts in flight would be coalesced into one
    engine request), English to fr, de, es: shifted one place every three texts, so that with
    `order` each target meets each order of the modes."""
    size = 2 * n + 8
    while True:
        distinct = list({i.text: i for i in workloads.build(workload, size, seed)}.values())
        if len(distinct) >= n or size > 100 * n:
            break
        size *= 2
    return [
        dataclasses.replace(item, target=TARGETS[(i + i // 3) % 3], reference=None)
        for i, item in enumerate(distinct[:n])
    ]


def order(i: int) -> list[str]:
    """The modes of the i-th text, rotated one place a text."""
    modes = list(MODES)
    k = i % len(modes)
    return modes[k:] + modes[:k]


def _ratio(a: float, b: float) -> float:
    return a / b if b > 0 and math.isfinite(a) and math.isfinite(b) else math.nan


def one_client(sent: Sequence[tuple[str, int, Record]]) -> dict[str, Any]:
    """Per mode (from (mode, text, record) rows): p50 and mean latency of its successes, mean
    output tokens; p50s as ratios to greedy's, and the median of each text's own ratio."""
    modes: dict[str, Any] = {}
    for mode in MODES:
        ok = [r for m, _, r in sent if m == mode and r.success]
        lat = [r.latency for r in ok]
        modes[mode] = {
            "requests": sum(m == mode for m, _, _ in sent),
            "errors": sum(m == mode and not r.success for m, _, r in sent),
            "p50_s": percentile(lat, 50),
            "mean_s": statistics.fmean(lat) if lat else math.nan,
            "output_tokens_mean": statistics.fmean(r.output_tokens for r in ok) if ok else math.nan,
        }
    greedy = {i: r.latency for m, i, r in sent if m == "greedy" and r.success}
    for mode in ("auto", "best"):
        own = [
            _ratio(r.latency, greedy[i])
            for m, i, r in sent
            if m == mode and r.success and i in greedy
        ]
        modes[mode]["p50_over_greedy"] = _ratio(modes[mode]["p50_s"], modes["greedy"]["p50_s"])
        modes[mode]["per_text_median_over_greedy"] = statistics.median(own) if own else math.nan
    return modes


def sixteen_clients(blocks: Sequence[tuple[str, Sequence[Record]]]) -> dict[str, Any]:
    """Per mode, its blocks pooled: completed translations over the blocks' summed wall time
    (first request sent to last answer), output tokens the same way, p50 and p99 latency;
    auto's as ratios to greedy's."""
    modes: dict[str, Any] = {}
    for mode in dict.fromkeys(m for m, _ in blocks):
        mine = [records for m, records in blocks if m == mode]
        each = [summarise(records) for records in mine]
        ok = [r for records in mine for r in records if r.success]
        seconds = sum(b.duration_s for b in each)
        lat = [r.latency for r in ok]
        modes[mode] = {
            "blocks": len(mine),
            "requests": sum(b.requests for b in each),
            "errors": sum(b.errors for b in each),
            "seconds": seconds,
            "translations_per_s": _ratio(len(ok), seconds),
            "output_tokens_per_s": _ratio(sum(r.output_tokens for r in ok), seconds),
            "p50_s": percentile(lat, 50),
            "p99_s": percentile(lat, 99),
            "block_translations_per_s": [b.rps for b in each],
        }
    if "auto" in modes and "greedy" in modes:
        auto, greedy = modes["auto"], modes["greedy"]
        auto["rate_over_greedy"] = _ratio(auto["translations_per_s"], greedy["translations_per_s"])
        auto["p99_over_greedy"] = _ratio(auto["p99_s"], greedy["p99_s"])
    return modes


@dataclasses.dataclass(frozen=True)
class Verdict:
    name: str
    met: bool
    text: str


def _verdict(
    name: str, what: str, mine: float, greedy: float, unit: str, limit: float, most: bool
) -> Verdict:
    """`mine` over `greedy` against `limit`, at most or at least; a ratio of nothing (a mode
    without a success) is NaN, which meets neither: MISSED."""
    ratio = _ratio(mine, greedy)
    met = ratio <= limit if most else ratio >= limit
    goal = f"{'at most' if most else 'at least'} {limit:g}x"
    figures = f"{mine:.2f} vs greedy {greedy:.2f}{unit}: {ratio:.2f}x"
    return Verdict(name, met, f"{what}: {figures} (target {goal}): {'MET' if met else 'MISSED'}")


def one_client_auto(auto_p50: float, greedy_p50: float) -> Verdict:
    what = "one client, auto p50"
    return _verdict("one_client_auto_p50", what, auto_p50, greedy_p50, " s", ONE_AUTO_P50, True)


def one_client_best(best_p50: float, greedy_p50: float) -> Verdict:
    what = "one client, best p50"
    return _verdict("one_client_best_p50", what, best_p50, greedy_p50, " s", ONE_BEST_P50, True)


def sixteen_auto_rate(auto: float, greedy: float) -> Verdict:
    what = f"{CLIENTS} clients, auto translations/s"
    return _verdict("sixteen_auto_rate", what, auto, greedy, "", MANY_AUTO_RATE, False)


def sixteen_auto_p99(auto_p99: float, greedy_p99: float) -> Verdict:
    what = f"{CLIENTS} clients, auto p99"
    return _verdict("sixteen_auto_p99", what, auto_p99, greedy_p99, " s", MANY_AUTO_P99, True)


def verdicts(summary: dict[str, Any]) -> list[Verdict]:
    one, many = summary["one_client"], summary["sixteen_clients"]
    return [
        one_client_auto(one["auto"]["p50_s"], one["greedy"]["p50_s"]),
        one_client_best(one["best"]["p50_s"], one["greedy"]["p50_s"]),
        sixteen_auto_rate(many["auto"]["translations_per_s"], many["greedy"]["translations_per_s"]),
        sixteen_auto_p99(many["auto"]["p99_s"], many["greedy"]["p99_s"]),
    ]


async def _info(url: str) -> dict[str, Any]:
    """/v1/info's `candidates`, or why it could not be read (a metrics key, an older server)."""
    try:
        async with httpx.AsyncClient(base_url=url, timeout=30) as c:
            r = await c.get("/v1/info")
    except httpx.HTTPError as exc:
        return {"error": f"{type(exc).__name__}: {exc}"[:300]}
    if r.status_code != 200:
        return {"error": f"/v1/info answered {r.status_code}: {r.text[:300]}"}
    return dict(r.json().get("candidates") or {"error": "/v1/info has no candidates"})


async def _probed(url: str, console: Console) -> dict[str, Any]:
    """The candidates report once auto's start-up probe has measured (it runs after /ready
    and uses the engine: measuring beside it would time both, and auto is 1 until it ends)."""
    deadline = time.monotonic() + PROBE_SECONDS
    while True:
        info = await _info(url)
        waiting = "error" not in info and info.get("setting") == "auto"
        if not waiting or info.get("cheap_batch") is not None:
            return info
        if time.monotonic() > deadline:
            console.log(f"the candidates probe had not ended after {PROBE_SECONDS:g} s")
            return info
        await asyncio.sleep(0.5)


def _used(before: dict[str, Any], after: dict[str, Any]) -> dict[str, int]:
    """How often each k (`k/why`) was used between the two reports."""
    was, now = before.get("used") or {}, after.get("used") or {}
    return {key: n - was.get(key, 0) for key, n in sorted(now.items()) if n != was.get(key, 0)}


async def _send(url: str, mode: str, item: Item) -> Record:
    (record,) = await closed_loop(
        DragomanTarget(url, extra=MODES[mode]), [item], 1, 1, BLOCK_SECONDS
    )
    return record


async def _one_client(
    url: str, items: list[Item], console: Console
) -> list[tuple[str, int, Record]]:
    sent: list[tuple[str, int, Record]] = []
    for i, item in enumerate(items):
        mine = [(mode, i, await _send(url, mode, item)) for mode in order(i)]
        sent += mine
        figures = ", ".join(
            f"{m} {r.latency:.2f} s" if r.success else f"{m} failed" for m, _, r in mine
        )
        console.log(f"one client, text {i + 1}/{len(items)} (to {item.target}): {figures}")
    return sent


async def _sixteen_clients(
    url: str, parts: list[list[Item]], console: Console
) -> list[tuple[str, list[Record]]]:
    blocks: list[tuple[str, list[Record]]] = []
    for n, (mode, part) in enumerate(zip(BLOCKS, parts, strict=True)):
        target = DragomanTarget(url, extra=MODES[mode])
        records = await closed_loop(target, part, CLIENTS, len(part), BLOCK_SECONDS)
        blocks.append((mode, records))
        s = summarise(records)
        console.log(
            f"{CLIENTS} clients, block {n + 1}/{len(BLOCKS)} ({mode}): {s.rps:.2f} "
            f"translations/s, p50 {s.latency_p50_s:.2f} s, p99 {s.latency_p99_s:.2f} s, "
            f"errors {s.errors}"
        )
    return blocks


async def measure(url: str, s: BenchSettings, console: Console) -> dict[str, Any]:
    """Both parts against the server at `url`: records, summary, verdicts, /v1/info's
    candidates before and after."""
    n, size = s.candidates_texts, s.candidates_block
    items = texts(s.workload, n + 2 * size + 1, s.seed)
    one, first, second = items[:n], items[n : n + size], items[n + size : n + 2 * size]
    before = await _probed(url, console)
    console.log(f"candidates before: {before}")
    for mode in MODES:  # warm-up, not recorded: a text of its own, once per mode
        await _send(url, mode, items[-1])
    sent = await _one_client(url, one, console)
    # Each mode gets each half once, and each mode one block on texts the server has seen
    # (its prefix cache may hold their prompts): greedy, auto, greedy, auto on A, B, B, A.
    blocks = await _sixteen_clients(url, [first, second, second, first], console)
    after = await _info(url)
    summary = {"one_client": one_client(sent), "sixteen_clients": sixteen_clients(blocks)}
    return {
        "candidates_before": before,
        "candidates_after": after,
        "candidates_used": _used(before, after),
        "summary": summary,
        "verdicts": [dataclasses.asdict(v) for v in verdicts(summary)],
        "records": {
            "one_client": [{"mode": m, "text": i, **r.to_dict()} for m, i, r in sent],
            "sixteen_clients": [
                {"mode": m, "block": b, **r.to_dict()}
                for b, (m, records) in enumerate(blocks)
                for r in records
            ],
        },
    }


async def _run(s: BenchSettings, console: Console) -> dict[str, Any]:
    from dragoman.bench.runner import check_server
    from dragoman.bench.servers import engine_flags, launch_dragoman, start

    flags: list[str] | None = None
    server = None
    if s.url:
        await check_server(s.url)
        url = s.url
    else:
        logs = s.out / "logs"
        logs.mkdir(parents=True, exist_ok=True)
        flags = [*engine_flags(s), "--log-level", "warning"]  # the cache off: engine work
        server = await start(launch_dragoman, logs, *flags)
        url = server.url
    try:
        measured = await measure(url, s, console)
    finally:
        if server is not None:
            await asyncio.to_thread(server.stop)
    return {
        "settings": {
            "texts": s.candidates_texts,
            "block": s.candidates_block,
            "clients": CLIENTS,
            "blocks": BLOCKS,
            "modes": MODES,
            "workload": s.workload,
            "targets": TARGETS,
            "seed": s.seed,
        },
        "server": {"url": s.url, "flags": flags},
        **measured,
    }


def run_candidates_cost(s: BenchSettings, console: Console) -> dict[str, Any]:
    from dragoman.bench.runner import host_meta

    out = asyncio.run(_run(s, console))
    out["meta"] = host_meta(s)
    return out


def _f(value: float | None, digits: int = 2) -> str:
    return "-" if value is None or not math.isfinite(value) else f"{value:.{digits}f}"


def _report(info: dict[str, Any]) -> str:
    if "error" in info:
        return f"not read ({info['error']})"
    steps = ", ".join(f"{k}: {v} ms" for k, v in (info.get("step_ms") or {}).items()) or "-"
    return (
        f"setting {info.get('setting')}, best {info.get('best')}, cheap batch "
        f"{info.get('cheap_batch')}, decode step by sequences at once {steps}"
    )


def markdown(out: dict[str, Any]) -> str:
    one, many = out["summary"]["one_client"], out["summary"]["sixteen_clients"]
    st = out["settings"]
    url = out["server"]["url"]
    server = f"The server at {url}" if url else "One `dragoman serve`, its defaults, cache off"
    used = ", ".join(f"{k} {n}" for k, n in out["candidates_used"].items()) or "none counted"
    lines = [
        f"# What candidates cost: {out['meta']['machine']}",
        "",
        f"{server}; workload `{st['workload']}`, English to {', '.join(st['targets'])} in "
        'turn. greedy: `"candidates": 1`; auto: no field (the server\'s --candidates); best: '
        '`"quality": "best"`. Reproduce: `dragoman bench --candidates-cost --out DIR`.',
        "",
        f"One client, {st['texts']} texts, each once per mode, the order rotated a text:",
        "",
        "| mode | requests | errors | p50 s | mean s | mean output tokens | p50 / greedy "
        "| per-text median / greedy |",
        "|---|---|---|---|---|---|---|---|",
        *(
            f"| {mode} | {m['requests']} | {m['errors']} | {_f(m['p50_s'])} | {_f(m['mean_s'])} "
            f"| {_f(m['output_tokens_mean'], 1)} | {_f(m.get('p50_over_greedy', 1.0))} "
            f"| {_f(m.get('per_text_median_over_greedy', 1.0))} |"
            for mode, m in one.items()
        ),
        "",
        f"{st['clients']} clients, closed loop, blocks of {st['block']} requests in the order "
        f"{', '.join(st['blocks'])} (blocks 1 and 4 on the same texts, 2 and 3 on the next):",
        "",
        "| mode | blocks | requests | errors | translations/s | output tok/s | p50 s | p99 s "
        "| translations/s by block |",
        "|---|---|---|---|---|---|---|---|---|",
        *(
            f"| {mode} | {m['blocks']} | {m['requests']} | {m['errors']} "
            f"| {_f(m['translations_per_s'])} | {_f(m['output_tokens_per_s'], 1)} "
            f"| {_f(m['p50_s'])} | {_f(m['p99_s'])} "
            f"| {', '.join(_f(x) for x in m['block_translations_per_s'])} |"
            for mode, m in many.items()
        ),
        "",
        "Output tokens as the server counts them: every candidate's, not only the kept one's.",
        "",
        f"- candidates before: {_report(out['candidates_before'])}",
        f"- candidates after: {_report(out['candidates_after'])}",
        f"- k used during the run (k/why): {used}",
        "",
        *(f"- {v['text']}" for v in out["verdicts"]),
        "",
    ]
    return "\n".join(lines)
