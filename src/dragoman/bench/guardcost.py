"""What the repetition guard costs: one engine, two translators over it (guard on: DELTA
outputs and a check per token; guard off: the final output only), the same texts submitted all
at once, rounds alternated on/off so drift in the machine falls on both. Same engine, same
process, same prompts: the ratio is the guard's cost and nothing else."""

from __future__ import annotations

import asyncio
import statistics
import time
from typing import Any

from rich.console import Console

from dragoman.bench.settings import BenchSettings
from dragoman.bench.verdicts import GUARD_MARGIN, band, noise_text, widest_spread
from dragoman.eval import workloads

ROUNDS = 3
# Targets where this model's greedy output does not loop: with no guard cut the two modes
# generate the same tokens, so tokens/s compares like with like.
TARGETS = ("fr", "de", "es")


async def _round(translator: Any, items: list[workloads.Item]) -> dict[str, Any]:
    started = time.perf_counter()
    outs = await asyncio.gather(*(translator.translate(i.text, i.source, i.target) for i in items))
    seconds = time.perf_counter() - started
    tokens = sum(o.output_tokens for o in outs)
    return {
        "seconds": seconds,
        "output_tokens": tokens,
        "output_tokens_per_s": tokens / seconds,
        "cut": sum(o.finish_reason == "repetition" for o in outs),
        "texts": [o.text for o in outs],
    }


async def _measure(s: BenchSettings, console: Console) -> dict[str, Any]:
    from dragoman.api.serve import languages_for
    from dragoman.engine.vllm_engine import open_vllm

    pool = workloads.build("uniform", 4 * s.offline_requests, s.seed)
    items = [i for i in pool if i.target in TARGETS][: s.offline_requests]
    async with open_vllm(s, languages_for(s.model)) as on:
        off = on.with_settings(s.model_copy(update={"repeat_window": 0}))
        await _round(on, items[:4])  # warm-up
        rounds: dict[str, list[dict[str, Any]]] = {"on": [], "off": []}
        for n in range(ROUNDS):
            for name, translator in (
                (("on", on), ("off", off))
                if n % 2 == 0
                else (
                    ("off", off),
                    ("on", on),
                )
            ):
                r = await _round(translator, items)
                rounds[name].append(r)
                console.log(f"guard {name}: {r['output_tokens_per_s']:.1f} output tok/s")
    same = sum(
        a == b for a, b in zip(rounds["on"][0]["texts"], rounds["off"][0]["texts"], strict=True)
    )
    for runs in rounds.values():
        for r in runs:
            del r["texts"]
    med = {k: statistics.median(r["output_tokens_per_s"] for r in v) for k, v in rounds.items()}
    return {
        "texts": len(items),
        "identical_outputs": same,
        "rounds": rounds,
        "median_output_tokens_per_s": med,
        "guard_cost": 1 - med["on"] / med["off"],
    }


def markdown(out: dict[str, Any]) -> str:
    med = out["median_output_tokens_per_s"]
    lines = [
        f"# Repetition guard cost: {out['meta']['machine']}",
        "",
        f"{out['texts']} texts ({', '.join(TARGETS)}) submitted at once, {ROUNDS} rounds per "
        f"mode alternated; {out['identical_outputs']}/{out['texts']} outputs identical in both "
        "modes.",
        "",
        "| guard | output tok/s per round | median |",
        "|---|---|---|",
    ]
    for name in ("on", "off"):
        rounds = ", ".join(f"{r['output_tokens_per_s']:.1f}" for r in out["rounds"][name])
        lines.append(f"| {name} | {rounds} | {med[name]:.1f} |")
    lines += ["", verdict(out), ""]
    return "\n".join(lines)


def verdict(out: dict[str, Any]) -> str:
    """The target is a band: the guard within 3% of no guard, either way. A guard that makes
    throughput more than 3% higher is not cheap: the rounds did not measure the same work, or
    the machine moved. The noise is the spread between one mode's rounds, the wider mode's."""
    cost = out["guard_cost"]
    noise = widest_spread(
        [r["output_tokens_per_s"] for r in rounds] for rounds in out["rounds"].values()
    )
    return (
        f"Guard cost: {100 * cost:+.1f}% of throughput (target within +-{100 * GUARD_MARGIN:g}%; "
        f"{noise_text(noise, 'rounds of each mode')}): {band(cost, GUARD_MARGIN, noise)}"
    )


def run_guard_cost(s: BenchSettings, console: Console) -> dict[str, Any]:
    from dragoman.bench.runner import host_meta

    out = asyncio.run(_measure(s, console))
    out["meta"] = host_meta(s)
    return out
