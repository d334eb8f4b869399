"""The figures of `dragoman bench --candidates-cost` (candidates.py), pure functions of its
records: each mode's summary at one client and at 16, the per-mode table (each k's cost as
ratios to greedy) and the four verdicts (greedy, auto and best only)."""

from __future__ import annotations

import dataclasses
import math
import statistics
from collections.abc import Mapping, Sequence
from typing import Any

from dragoman.bench.loadgen import Record
from dragoman.bench.stats import summarise
from dragoman.stats import percentile

CLIENTS = 16

# The targets, as ratios to greedy's figure in the same run: one client's p50 of auto and of
# best at most, 16 clients' translations/s of auto at least, their p99 of auto at most.
ONE_AUTO_P50, ONE_BEST_P50, MANY_AUTO_RATE, MANY_AUTO_P99 = 1.1, 2.0, 0.95, 1.1

SIXTEEN_FIGURES = ("translations_per_s", "output_tokens_per_s", "p50_s", "p99_s")
"""A mode's 16-client figures the table shows, each also over greedy's."""


def ratio(a: float, b: float) -> float:
    return a / b if b > 0 and math.isfinite(a) and math.isfinite(b) else math.nan


def one_client(sent: Sequence[tuple[str, int, Record]]) -> dict[str, Any]:
    """Per mode (from (mode, text, record) rows, the modes in the order they first appear):
    p50 and mean latency of its successes, mean output tokens; each other mode's p50 as a
    ratio to greedy's, and the median of each text's own ratio."""
    modes: dict[str, Any] = {}
    for mode in dict.fromkeys(m for m, _, _ in sent):
        ok = [r for m, _, r in sent if m == mode and r.success]
        lat = [r.latency for r in ok]
        modes[mode] = {
            "requests": sum(m == mode for m, _, _ in sent),
            "errors": sum(m == mode and not r.success for m, _, r in sent),
            "p50_s": percentile(lat, 50),
            "mean_s": statistics.fmean(lat) if lat else math.nan,
            "output_tokens_mean": statistics.fmean(r.output_tokens for r in ok) if ok else math.nan,
        }
    if "greedy" not in modes:
        return modes
    greedy = {i: r.latency for m, i, r in sent if m == "greedy" and r.success}
    for mode in [m for m in modes if m != "greedy"]:
        own = [
            ratio(r.latency, greedy[i])
            for m, i, r in sent
            if m == mode and r.success and i in greedy
        ]
        modes[mode]["p50_over_greedy"] = ratio(modes[mode]["p50_s"], modes["greedy"]["p50_s"])
        modes[mode]["per_text_median_over_greedy"] = statistics.median(own) if own else math.nan
    return modes


def sixteen_clients(blocks: Sequence[tuple[str, Sequence[Record]]]) -> dict[str, Any]:
    """Per mode, its blocks pooled: completed translations over the blocks' summed wall time
    (first request sent to last answer), output tokens the same way, p50 and p99 latency;
    each other mode's rate and p99 as ratios to greedy's."""
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
            "translations_per_s": ratio(len(ok), seconds),
            "output_tokens_per_s": ratio(sum(r.output_tokens for r in ok), seconds),
            "p50_s": percentile(lat, 50),
            "p99_s": percentile(lat, 99),
            "block_translations_per_s": [b.rps for b in each],
        }
    greedy = modes.get("greedy")
    for mode, m in modes.items():
        if greedy is None or mode == "greedy":
            continue
        m["rate_over_greedy"] = ratio(m["translations_per_s"], greedy["translations_per_s"])
        m["p99_over_greedy"] = ratio(m["p99_s"], greedy["p99_s"])
    return modes


def asked(body: Mapping[str, Any]) -> int | str:
    """The k a mode's body asks for: a number, `auto` (the server's choice) or `best`."""
    return "best" if body.get("quality") == "best" else body.get("candidates", "auto")


def table(
    modes: Mapping[str, Mapping[str, Any]], one: Mapping[str, Any], many: Mapping[str, Any]
) -> list[dict[str, Any]]:
    """One row per mode of `modes` (name -> body): the k it asks; one client's p50 and mean
    latency, its p50 over greedy's; at 16 clients (from `sixteen_clients`) each of
    SIXTEEN_FIGURES and its ratio to greedy's. None where the mode did not run."""
    g1, g16 = one.get("greedy") or {}, many.get("greedy") or {}
    rows = []
    for mode, body in modes.items():
        o, m = one.get(mode), many.get(mode)
        row: dict[str, Any] = {
            "mode": mode,
            "k": asked(body),
            "one_client_p50_s": o["p50_s"] if o else None,
            "one_client_mean_s": o["mean_s"] if o else None,
            "one_client_p50_over_greedy": ratio(o["p50_s"], g1.get("p50_s", math.nan))
            if o
            else None,
        }
        for name in SIXTEEN_FIGURES:
            row[f"sixteen_{name}"] = m[name] if m else None
            row[f"sixteen_{name}_over_greedy"] = (
                ratio(m[name], g16.get(name, math.nan)) if m else None
            )
        rows.append(row)
    return rows


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
    r = ratio(mine, greedy)
    met = r <= limit if most else r >= limit
    goal = f"{'at most' if most else 'at least'} {limit:g}x"
    figures = f"{mine:.2f} vs greedy {greedy:.2f}{unit}: {r:.2f}x"
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
