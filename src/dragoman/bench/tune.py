"""`dragoman tune`: the seed's manual tuning, automated, for the host it runs on. First the
engine's dtype and CPU threads (every combination, at --max-num-seqs), then, with the best of
those, max_num_seqs from 1 doubling: measure throughput, decode time per token and tail latency
on the real workload at the real concurrency, stop when it degrades, recommend settings with the
evidence and write them as a settings file `dragoman serve --config` loads."""

from __future__ import annotations

import asyncio
from dataclasses import asdict, dataclass
from typing import Any

import httpx
from prometheus_client.parser import text_string_to_metric_families
from rich.console import Console
from rich.table import Table

from dragoman.bench._json import dumps
from dragoman.bench.loadgen import closed_loop
from dragoman.bench.servers import engine_flags, launch_dragoman, owning_servers, start
from dragoman.bench.settings import TuneSettings
from dragoman.bench.stats import summarise
from dragoman.bench.targets import DragomanTarget
from dragoman.eval import workloads

ITL = "vllm:inter_token_latency_seconds"


@dataclass
class TuneRow:
    dtype: str
    threads: str
    max_num_seqs: int
    max_num_batched_tokens: int
    concurrency: int
    rps: float
    output_tokens_per_s: float
    decode_ms_per_token: float | None
    latency_p50_s: float
    latency_p99_s: float
    errors: int
    verdict: str = ""


def histogram_totals(metrics_text: str, name: str) -> tuple[float, float]:
    """(sum, count) of a Prometheus histogram across its label sets."""
    total = count = 0.0
    for family in text_string_to_metric_families(metrics_text):
        if family.name != name:
            continue
        for sample in family.samples:
            if sample.name == name + "_sum":
                total += sample.value
            elif sample.name == name + "_count":
                count += sample.value
    return total, count


async def _measure(s: TuneSettings, engine: TuneSettings, items: list[Any]) -> list[TuneRow]:
    logs = s.out / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    seqs, tokens = engine.max_num_seqs, engine.max_num_batched_tokens
    server = await start(launch_dragoman, logs, *engine_flags(engine), "--log-level", "warning")
    rows = []
    try:
        target = DragomanTarget(server.url)
        await closed_loop(target, items[-4:], 2, 4, 60)  # warm-up
        async with httpx.AsyncClient(base_url=server.url, timeout=30) as client:
            for c in s.concurrency:
                before = histogram_totals((await client.get("/metrics")).text, ITL)
                records = await closed_loop(
                    target, items, c, s.requests_per_level, s.seconds_per_level
                )
                after = histogram_totals((await client.get("/metrics")).text, ITL)
                n = after[1] - before[1]
                decode = 1000 * (after[0] - before[0]) / n if n > 0 else None
                sm = summarise(records)
                rows.append(
                    TuneRow(
                        engine.dtype,
                        engine.cpu_threads,
                        seqs,
                        tokens,
                        c,
                        sm.rps,
                        sm.output_tokens_per_s,
                        decode,
                        sm.latency_p50_s,
                        sm.latency_p99_s,
                        sm.errors,
                    )
                )
    finally:
        await asyncio.to_thread(server.stop)
    return rows


def degraded(prev: TuneRow, cur: TuneRow, tolerance: float) -> bool:
    """More sequences stopped paying: throughput gained under `tolerance`, while decode per
    token or tail latency got worse by more than it."""
    gain = cur.rps / prev.rps - 1 if prev.rps else 1.0
    slower = (
        prev.decode_ms_per_token is not None
        and cur.decode_ms_per_token is not None
        and cur.decode_ms_per_token > prev.decode_ms_per_token * (1 + tolerance)
    )
    tail = cur.latency_p99_s > prev.latency_p99_s * (1 + tolerance)
    return gain < tolerance and (slower or tail)


def recommend(rows: list[TuneRow], tolerance: float) -> TuneRow:
    """At the highest concurrency: among settings within `tolerance` of the best throughput
    (output tokens/s: it does not depend on how long the answers happen to be), the lowest p99
    (then the fewest sequences, which cost less KV cache)."""
    top = max(r.concurrency for r in rows)
    at_top = [r for r in rows if r.concurrency == top and r.errors == 0] or [
        r for r in rows if r.concurrency == top
    ]
    best = max(r.output_tokens_per_s for r in at_top)
    near = [r for r in at_top if r.output_tokens_per_s >= best * (1 - tolerance)]
    return min(near, key=lambda r: (r.latency_p99_s, r.max_num_seqs))


def markdown(rows: list[TuneRow], choice: TuneRow, s: TuneSettings) -> str:
    lines = [
        f"# dragoman tune: workload `{s.workload}`, concurrency {s.concurrency}",
        "",
        "| dtype | threads | max_num_seqs | batched tokens | clients | req/s | out tok/s "
        "| decode ms/token | p50 s | p99 s | errors | note |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        decode = "-" if r.decode_ms_per_token is None else f"{r.decode_ms_per_token:.1f}"
        lines.append(
            f"| {r.dtype} | {r.threads} | {r.max_num_seqs} | {r.max_num_batched_tokens} "
            f"| {r.concurrency} | {r.rps:.2f} "
            f"| {r.output_tokens_per_s:.1f} | {decode} | {r.latency_p50_s:.2f} "
            f"| {r.latency_p99_s:.2f} | {r.errors} | {r.verdict} |"
        )
    lines += [
        "",
        f"**Recommendation:** `--dtype {choice.dtype} --cpu-threads {choice.threads} "
        f"--max-num-seqs {choice.max_num_seqs} --max-num-batched-tokens "
        f"{choice.max_num_batched_tokens}`: {choice.output_tokens_per_s:.1f} output tok/s, "
        f"{choice.rps:.2f} req/s and p99 {choice.latency_p99_s:.2f} s at {choice.concurrency} "
        f"clients, the lowest tail latency within {100 * s.tolerance:.0f}% of the best "
        "throughput. Load it with `dragoman serve --config tuned.toml`.",
        "",
    ]
    return "\n".join(lines)


def _log(console: Console, cur: TuneRow) -> None:
    console.log(
        f"  {cur.output_tokens_per_s:.1f} out tok/s, {cur.rps:.2f} req/s, decode "
        f"{cur.decode_ms_per_token or float('nan'):.1f} ms/token, p99 {cur.latency_p99_s:.2f} s "
        f"at {cur.concurrency} clients"
    )


async def _engine_stage(
    s: TuneSettings, items: list[Any], console: Console, gpu: bool
) -> tuple[list[TuneRow], TuneSettings]:
    """Every dtype x threads choice at the configured max_num_seqs; the best engine goes on."""
    threads = ["host"] if gpu else s.threads
    combos = [(d, t) for d in s.dtypes for t in threads]
    if len(combos) == 1:
        d, t = combos[0]
        return [], s.model_copy(update={"dtype": d, "cpu_threads": t})
    rows: list[TuneRow] = []
    for d, t in combos:
        console.log(f"dtype={d} threads={t} max_num_seqs={s.max_num_seqs}: starting")
        engine = s.model_copy(update={"dtype": d, "cpu_threads": t})
        level_rows = await _measure(s, engine, items)
        rows += level_rows
        _log(console, level_rows[-1])
    best = recommend(rows, s.tolerance)
    return rows, s.model_copy(update={"dtype": best.dtype, "cpu_threads": best.threads})


async def _sweep(s: TuneSettings, console: Console, gpu: bool) -> tuple[list[TuneRow], TuneRow]:
    items = workloads.build(s.workload, s.workload_size, s.seed)
    rows, base = await _engine_stage(s, items, console, gpu)
    for tokens in s.batched_tokens:
        prev: TuneRow | None = None
        for seqs in s.seqs:
            console.log(
                f"dtype={base.dtype} threads={base.cpu_threads} max_num_seqs={seqs} "
                f"max_num_batched_tokens={tokens}: starting"
            )
            engine = base.model_copy(
                update={"max_num_seqs": seqs, "max_num_batched_tokens": tokens}
            )
            level_rows = [r for r in rows if _same(r, engine)] or await _measure(s, engine, items)
            if level_rows[0] not in rows:
                rows += level_rows
            cur = level_rows[-1]  # judged at the highest concurrency
            _log(console, cur)
            if prev is not None and degraded(prev, cur, s.tolerance):
                cur.verdict = "degraded: stopped"
                break
            prev = cur
    return rows, recommend(rows, s.tolerance)


def _same(row: TuneRow, engine: TuneSettings) -> bool:
    """Already measured in the engine stage: not started again."""
    return (row.dtype, row.threads, row.max_num_seqs, row.max_num_batched_tokens) == (
        engine.dtype,
        engine.cpu_threads,
        engine.max_num_seqs,
        engine.max_num_batched_tokens,
    )


def settings_file(choice: TuneRow, host_label: str) -> str:
    """A TOML settings file of the recommendation (flat keys: `dragoman serve --config`)."""
    return (
        f"# written by `dragoman tune` on {host_label}\n"
        f"# {choice.output_tokens_per_s:.1f} output tok/s, p99 {choice.latency_p99_s:.2f} s "
        f"at {choice.concurrency} clients\n"
        f'dtype = "{choice.dtype}"\n'
        f'cpu_threads = "{choice.threads}"\n'
        f"max_num_seqs = {choice.max_num_seqs}\n"
        f"max_num_batched_tokens = {choice.max_num_batched_tokens}\n"
    )


def run_tune(s: TuneSettings) -> None:
    from dragoman.bench.runner import host_meta
    from dragoman.engine.vllm_engine import is_cpu_platform
    from dragoman.writable import check_dir

    check_dir(s.out, "--out")  # before the first server starts

    console = Console(stderr=True)
    meta = host_meta(s)
    with owning_servers():
        rows, choice = asyncio.run(_sweep(s, console, gpu=not is_cpu_platform()))
    choice.verdict = (choice.verdict + " recommended").strip()
    s.out.mkdir(parents=True, exist_ok=True)
    (s.out / "tune.json").write_text(
        dumps(
            {"meta": meta, "rows": [asdict(r) for r in rows], "recommended": asdict(choice)},
            indent=1,
        )
    )
    (s.out / "tuned.toml").write_text(settings_file(choice, meta["machine"]))
    md = f"- machine: {meta['machine']}\n\n" + markdown(rows, choice, s)
    (s.out / "tune.md").write_text(md)
    table = Table(
        "dtype", "threads", "seqs", "tokens", "clients", "tok/s", "decode ms/tok", "p99 s", "note"
    )
    for r in rows:
        decode = "-" if r.decode_ms_per_token is None else f"{r.decode_ms_per_token:.1f}"
        table.add_row(
            r.dtype,
            r.threads,
            str(r.max_num_seqs),
            str(r.max_num_batched_tokens),
            str(r.concurrency),
            f"{r.output_tokens_per_s:.1f}",
            decode,
            f"{r.latency_p99_s:.2f}",
            r.verdict,
        )
    console.print(table)
    console.print(md.split("**Recommendation:**")[1].strip())
