"""The eval table of candidates: `dragoman eval --candidates N` runs of the same texts against
one server, one per k, side by side: each pair's chrF and its gain over greedy (k = 1), the
outputs in the wrong language, the runaways, and the verdict on the quality target (at k = 4:
a mean gain of at least 2 chrF with no pair worse, no output in the wrong language on fr, de
and es, no runaway). `benchmarks/candidates/table.py` writes it beside the runs."""

from __future__ import annotations

import json
import statistics
from pathlib import Path
from typing import Any

GAIN, VERDICT_K = 2.0, 4
CHECKED = ("en-fr", "en-de", "en-es")
"""The pairs whose wrong-language outputs must be none."""


def pairs(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """An eval run's `all` row of each pair."""
    return {r["pair"]: r for r in doc["summary"] if r["kind"] == "all"}


def runaways(row: dict[str, Any]) -> int:
    """Outputs cut by the guard or the output budget, or over three times the source."""
    return int(row["guard_stopped"]) + int(row["length_stopped"]) + int(row["over_3x"])


def table(runs: dict[int, dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per k (1 first): mean chrF over the pairs, its gain over k = 1, each pair's
    gain, wrong-language outputs on the checked pairs and on all, runaways, mean seconds."""
    if 1 not in runs:
        raise ValueError("the table needs the greedy run (k = 1)")
    base = pairs(runs[1])
    rows = []
    for k in sorted(runs):
        mine = pairs(runs[k])
        if set(mine) != set(base):
            raise ValueError(f"k = {k}: its pairs differ from greedy's")
        gains = {p: round(mine[p]["chrf"] - base[p]["chrf"], 2) for p in sorted(mine)}
        rows.append(
            {
                "k": k,
                "chrf": round(statistics.mean(r["chrf"] for r in mine.values()), 2),
                "gain": round(statistics.mean(gains.values()), 2),
                "pair_gains": gains,
                "wrong_language_checked": sum(
                    int(mine[p]["wrong_language"]) for p in CHECKED if p in mine
                ),
                "wrong_language": sum(int(r["wrong_language"]) for r in mine.values()),
                "runaways": sum(runaways(r) for r in mine.values()),
                "mean_seconds": round(statistics.mean(r["mean_seconds"] for r in mine.values()), 3),
            }
        )
    return rows


def verdict(rows: list[dict[str, Any]], k: int = VERDICT_K) -> str:
    """MET or MISSED, with the figures, for the run of `k` candidates."""
    row = next((r for r in rows if r["k"] == k), None)
    if row is None:
        return f"MISSED: no run of k = {k}"
    worse = [p for p, g in row["pair_gains"].items() if g < 0]
    misses = []
    if row["gain"] < GAIN:
        misses.append(f"mean gain {row['gain']:+.2f} chrF < {GAIN:+.1f}")
    if worse:
        misses.append(f"worse on {', '.join(worse)}")
    if row["wrong_language_checked"]:
        misses.append(f"{row['wrong_language_checked']} wrong-language on fr/de/es")
    if row["runaways"]:
        misses.append(f"{row['runaways']} runaways")
    figures = (
        f"k = {k}: mean gain {row['gain']:+.2f} chrF over greedy, worst pair "
        f"{min(row['pair_gains'].values()):+.2f}, wrong-language on fr/de/es "
        f"{row['wrong_language_checked']}, runaways {row['runaways']}"
    )
    return f"MISSED ({'; '.join(misses)}): {figures}" if misses else f"MET: {figures}"


def markdown(rows: list[dict[str, Any]], host: str) -> str:
    """The table as markdown, with its verdict and host."""
    names = list(rows[0]["pair_gains"])
    head = ["k", "mean chrF", "gain", *names, "wrong lang. fr/de/es", "wrong lang. all"]
    head += ["runaways", "mean s"]
    lines = [
        f"Host: {host}",
        "",
        "| " + " | ".join(head) + " |",
        "|" + "---|" * len(head),
    ]
    for r in rows:
        cells = [str(r["k"]), f"{r['chrf']:.2f}", f"{r['gain']:+.2f}"]
        cells += [f"{r['pair_gains'][p]:+.2f}" for p in names]
        cells += [str(r["wrong_language_checked"]), str(r["wrong_language"])]
        cells += [str(r["runaways"]), f"{r['mean_seconds']:.2f}"]
        lines.append("| " + " | ".join(cells) + " |")
    lines += ["", f"Verdict: {verdict(rows)}", ""]
    return "\n".join(lines)


def write(folder: Path) -> str:
    """Read `folder`/eval-k*/eval.json, write `folder`/eval-table.json and .md; the verdict."""
    runs = {
        int(p.parent.name.removeprefix("eval-k")): json.loads(p.read_text())
        for p in sorted(folder.glob("eval-k*/eval.json"))
    }
    rows = table(runs)
    host = str(runs[1]["meta"].get("machine", "unknown host"))
    (folder / "eval-table.json").write_text(json.dumps({"host": host, "rows": rows}, indent=1))
    (folder / "eval-table.md").write_text(markdown(rows, host))
    return verdict(rows)
