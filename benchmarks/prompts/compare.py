"""Two `dragoman eval` runs of the same set, per pair: chrF of each, the difference, and a 95%
interval for it from paired bootstrap resampling (the same texts drawn for both runs, 1000
times, seed 0): a difference whose interval spans 0 is within what the set's size can tell.

    python benchmarks/prompts/compare.py BASE/eval.json NEW/eval.json
"""

from __future__ import annotations

import json
import random
import sys
from collections import defaultdict
from pathlib import Path

from sacrebleu.metrics import CHRF

SAMPLES = 1000


def _by_pair(path: Path) -> dict[str, dict[str, tuple[str, str]]]:
    pairs: dict[str, dict[str, tuple[str, str]]] = defaultdict(dict)
    for item in json.loads(path.read_text())["items"]:
        pairs[item["id"].split("/")[0]][item["id"]] = (item["text"] or "", item["reference"])
    return pairs


def _stats(hyps: list[str], refs: list[str]) -> list[list[int]]:
    """Per text, the n-gram counts sacrebleu sums into a corpus chrF (its own private helpers:
    a resampled corpus is then a sum, not a re-tokenization)."""
    return [list(s) for s in CHRF()._extract_corpus_statistics(hyps, [refs])]


def _chrf(stats: list[list[int]]) -> float:
    return float(
        CHRF()._compute_score_from_stats([sum(col) for col in zip(*stats, strict=True)]).score
    )


def main() -> None:
    base, new = _by_pair(Path(sys.argv[1])), _by_pair(Path(sys.argv[2]))
    rng = random.Random(0)
    print("| pair | base chrF | new chrF | difference | 95% interval |")
    print("|---|---|---|---|---|")
    for pair, items in base.items():
        ids = sorted(items)
        refs = [items[i][1] for i in ids]
        a = [items[i][0] for i in ids]
        b = [new[pair][i][0] for i in ids]
        sa, sb = _stats(a, refs), _stats(b, refs)
        diffs = []
        for _ in range(SAMPLES):
            pick = [rng.randrange(len(ids)) for _ in ids]
            diffs.append(_chrf([sb[k] for k in pick]) - _chrf([sa[k] for k in pick]))
        diffs.sort()
        low, high = diffs[int(0.025 * SAMPLES)], diffs[int(0.975 * SAMPLES) - 1]
        ca, cb = _chrf(sa), _chrf(sb)
        print(f"| {pair} | {ca:.2f} | {cb:.2f} | {cb - ca:+.2f} | {low:+.1f} to {high:+.1f} |")


if __name__ == "__main__":
    main()
