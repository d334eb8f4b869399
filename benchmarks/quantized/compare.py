"""chrF per pair of several `dragoman eval` runs of each weights form, pooled: the runs' texts
together as one corpus per pair (sacrebleu's corpus chrF, as `dragoman eval` computes it), and
each form's difference from the first form given.

    python benchmarks/quantized/compare.py RESULTS_DIR full-float32 w8a8-float32 ...

reads RESULTS_DIR/eval-<form>*/eval.json (every seed of that form) and prints a Markdown table.
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from pathlib import Path

from sacrebleu.metrics import CHRF


def pooled(results: Path, form: str) -> tuple[dict[str, float], dict[str, int], list[str]]:
    hyps: dict[str, list[str]] = defaultdict(list)
    refs: dict[str, list[str]] = defaultdict(list)
    runs = sorted(p for p in results.glob(f"eval-{form}*/eval.json")
                  if p.parent.name in (f"eval-{form}",) or p.parent.name.startswith(f"eval-{form}-seed"))
    for run in runs:
        for item in json.loads(run.read_text())["items"]:
            pair = item["id"].split("/")[0]
            hyps[pair].append(item["text"] or "")
            refs[pair].append(item["reference"])
    chrf = {p: CHRF().corpus_score(hyps[p], [refs[p]]).score for p in hyps}
    return chrf, {p: len(h) for p, h in hyps.items()}, [r.parent.name for r in runs]


def main() -> None:
    results, forms = Path(sys.argv[1]), sys.argv[2:]
    scores = {f: pooled(results, f) for f in forms}
    base = scores[forms[0]][0]
    print("| pair | texts | " + " | ".join(forms) + " |")
    print("|---|---|" + "---|" * len(forms))
    for pair in base:
        cells = [f"{base[pair]:.1f}"] + [
            f"{scores[f][0][pair]:.1f} ({scores[f][0][pair] - base[pair]:+.1f})" for f in forms[1:]
        ]
        print(f"| {pair} | {scores[forms[0]][1][pair]} | " + " | ".join(cells) + " |")
    for f in forms:
        print(f"\n{f}: {', '.join(scores[f][2])}")


if __name__ == "__main__":
    main()
