"""`dragoman bench --candidates-cost`: what candidates (service/candidates.py) cost a request,
each comparison paired within one run against one server: its defaults with the cache off
(every request is engine work), or the one at --url.

One client: each of --candidates-texts texts is sent once in each mode, in an order rotated
from text to text so the modes share the places in the sequence: greedy (`candidates: 1`),
auto (no field: the server's --candidates), best (`quality: best`) and `kN` for each N of
--candidates-ks (`candidates: N`, forced). Then 16 clients, closed loop, in blocks of
--candidates-block requests: greedy, auto, greedy, auto on texts A, B, B, A (the verdicts'
design), then one block of each `kN` on A (for the per-k table only). The texts are
--workload's (variable: 10-200 tokens), English to French, German and Spanish. /v1/info's
`candidates` (the probe's step times, how often each k was used) is read before and after.
The figures and verdicts are _candidates_figures.py's."""

from __future__ import annotations

import asyncio
import dataclasses
import math
import time
from collections.abc import Sequence
from typing import Any

import httpx
from rich.console import Console

from dragoman.bench._candidates_figures import (
    CLIENTS,
    SIXTEEN_FIGURES,
    one_client,
    sixteen_clients,
    table,
    verdicts,
)
from dragoman.bench.loadgen import Record, closed_loop
from dragoman.bench.settings import BenchSettings
from dragoman.bench.stats import summarise
from dragoman.bench.targets import DragomanTarget
from dragoman.eval import workloads
from dragoman.eval.workloads import Item

MODES: dict[str, dict[str, Any]] = {
    "greedy": {"candidates": 1},
    "auto": {},
    "best": {"quality": "best"},
}
"""The verdicts' modes: each one's fields in a request's body."""
TARGETS = ("fr", "de", "es")
BLOCKS = ("greedy", "auto", "greedy", "auto")
"""The verdicts' 16-client blocks, on texts A, B, B, A."""
BLOCK_SECONDS = 1800.0
"""The most a block or a request may take (a bound: blocks end at their request count)."""
PROBE_SECONDS = 600.0
"""The most to wait for the server's start-up probe (`candidates = auto`) to finish."""


def modes(ks: Sequence[int]) -> dict[str, dict[str, Any]]:
    """MODES, then `kN` for each N of `ks`: `candidates: N`, forced (the per-k table's)."""
    return {**MODES, **{f"k{k}": {"candidates": k} for k in ks}}


def texts(workload: str, n: int, seed: int) -> list[Item]:
    """`n` distinct texts of `workload` (identical texts in flight would be coalesced into one
    engine request), English to fr, de, es: shifted one place every three texts, so that
    over three texts a mode, with `order`, each target meets each mode in first place."""
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


def order(i: int, names: Sequence[str] = tuple(MODES)) -> list[str]:
    """The modes `names` of the i-th text, rotated one place a text."""
    k = i % len(names)
    return [*names[k:], *names[:k]]


def plan(ks: Sequence[int], a: list[Item], b: list[Item]) -> list[tuple[str, list[Item]]]:
    """The 16-client blocks, (mode, texts): greedy, auto, greedy, auto on A, B, B, A; then
    each `kN` once on A."""
    return [*zip(BLOCKS, [a, b, b, a], strict=True), *((f"k{k}", a) for k in ks)]


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


async def _send(url: str, body: dict[str, Any], item: Item) -> Record:
    (record,) = await closed_loop(DragomanTarget(url, extra=body), [item], 1, 1, BLOCK_SECONDS)
    return record


async def _one_client(
    url: str, bodies: dict[str, dict[str, Any]], items: list[Item], console: Console
) -> list[tuple[str, int, Record]]:
    sent: list[tuple[str, int, Record]] = []
    for i, item in enumerate(items):
        mine = [(m, i, await _send(url, bodies[m], item)) for m in order(i, list(bodies))]
        sent += mine
        figures = ", ".join(
            f"{m} {r.latency:.2f} s" if r.success else f"{m} failed" for m, _, r in mine
        )
        console.log(f"one client, text {i + 1}/{len(items)} (to {item.target}): {figures}")
    return sent


async def _sixteen_clients(
    url: str,
    bodies: dict[str, dict[str, Any]],
    parts: list[tuple[str, list[Item]]],
    console: Console,
) -> list[tuple[str, list[Record]]]:
    blocks: list[tuple[str, list[Record]]] = []
    for n, (mode, part) in enumerate(parts):
        target = DragomanTarget(url, extra=bodies[mode])
        records = await closed_loop(target, part, CLIENTS, len(part), BLOCK_SECONDS)
        blocks.append((mode, records))
        s = summarise(records)
        console.log(
            f"{CLIENTS} clients, block {n + 1}/{len(parts)} ({mode}): {s.rps:.2f} "
            f"translations/s, p50 {s.latency_p50_s:.2f} s, p99 {s.latency_p99_s:.2f} s, "
            f"errors {s.errors}"
        )
    return blocks


async def measure(url: str, s: BenchSettings, console: Console) -> dict[str, Any]:
    """Both parts against the server at `url`: records, summary, verdicts, /v1/info's
    candidates before and after."""
    n, size = s.candidates_texts, s.candidates_block
    bodies = modes(s.candidates_ks)
    items = texts(s.workload, n + 2 * size + 1, s.seed)
    one, first, second = items[:n], items[n : n + size], items[n + size : n + 2 * size]
    before = await _probed(url, console)
    console.log(f"candidates before: {before}")
    for body in bodies.values():  # warm-up, not recorded: a text of its own, once per mode
        await _send(url, body, items[-1])
    sent = await _one_client(url, bodies, one, console)
    # greedy and auto get each half once, and each one block on texts the server has seen
    # (its prefix cache may hold their prompts): greedy, auto, greedy, auto on A, B, B, A.
    # Each kN then gets one block on A, for the table only.
    blocks = await _sixteen_clients(url, bodies, plan(s.candidates_ks, first, second), console)
    after = await _info(url)
    ones, many = one_client(sent), sixteen_clients(blocks)
    summary = {"one_client": ones, "sixteen_clients": many, "table": table(bodies, ones, many)}
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
            "ks": s.candidates_ks,
            "blocks": [m for m, _ in plan(s.candidates_ks, [], [])],
            "modes": modes(s.candidates_ks),
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


def _cell(value: float | None, digits: int = 2) -> str:
    """A table cell: blank where the mode did not run, `-` where it ran without a figure."""
    return "" if value is None else _f(value, digits)


def _k_table(rows: list[dict[str, Any]]) -> list[str]:
    """The per-mode table: one client's latency, 16 clients' rate, tokens and latency, each
    against greedy's."""
    keys = [f"sixteen_{n}{x}" for n in SIXTEEN_FIGURES for x in ("", "_over_greedy")]

    def cells(r: dict[str, Any]) -> str:
        one = [r["one_client_p50_s"], r["one_client_mean_s"], r["one_client_p50_over_greedy"]]
        many = [_cell(r[k], 1 if k == "sixteen_output_tokens_per_s" else 2) for k in keys]
        return " | ".join([r["mode"], str(r["k"]), *map(_cell, one), *many])

    return [
        "| mode | k asked | 1 client: p50 s | mean s | p50 / greedy | 16 clients: translations/s "
        "| / greedy | output tok/s | / greedy | p50 s | / greedy | p99 s | / greedy |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
        *(f"| {cells(r)} |" for r in rows),
    ]


def _report(info: dict[str, Any]) -> str:
    if "error" in info:
        return f"not read ({info['error']})"
    steps = ", ".join(f"{k}: {v} ms" for k, v in (info.get("probe_ms") or {}).items()) or "-"
    return (
        f"setting {info.get('setting')}, best {info.get('best')}, cheap batch "
        f"{info.get('cheap_batch')}, the probe's sentence by candidates made {steps}"
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
        '`"quality": "best"`; kN: `"candidates": N`. Reproduce: `dragoman bench '
        f"--candidates-cost --candidates-ks {','.join(map(str, st['ks'])) or '[]'} --out DIR`.",
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
        f"{', '.join(st['blocks'])} (blocks 1 and 4 on the same texts, 2 and 3 on the next; "
        "each kN on block 1's):",
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
        "Each mode against greedy in the same run (at 16 clients greedy's two blocks pooled, "
        "each kN's one block on the texts of block 1; blank: not run at 16 clients):",
        "",
        *_k_table(out["summary"]["table"]),
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
