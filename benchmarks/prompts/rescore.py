"""Re-judge the languages of committed `dragoman eval` outputs with today's rules, without
running a server: the verdicts that changed, and wrong / judged per pair after.

    python benchmarks/prompts/rescore.py benchmarks/results/eval-avx512bf16-2core/*/eval.json
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

from dragoman.eval import metrics
from dragoman.eval.client import Output
from dragoman.eval.sets import EvalItem


def rescore(path: Path, detect: metrics.Detect) -> None:
    records = json.loads(path.read_text())["items"]
    items = []
    for r in records:
        pair = r["id"].split("/")[0]
        source, target = pair.split("-")
        items.append(
            EvalItem(r["id"], source, target, r["kind"], r["source"], r["reference"], r["origin"])
        )
    outputs = [Output(r["text"], r["finish_reason"], error=r["error"]) for r in records]
    wrong: Counter[str] = Counter()
    judged: Counter[str] = Counter()
    for r, item, (is_judged, is_wrong) in zip(
        records, items, metrics.language_checks(items, outputs, detect), strict=True
    ):
        now = is_judged and is_wrong
        if now != r["wrong_language"]:
            print(
                f"{path.parent.name} {r['id']}: {r['wrong_language']} -> {now}: {r['text'][:70]!r}"
            )
        judged[item.pair] += is_judged
        wrong[item.pair] += now
    print(f"{path.parent.name}: " + ", ".join(f"{p} {wrong[p]}/{judged[p]}" for p in judged))


def main() -> None:
    detect = metrics.lingua_detect()
    for arg in sys.argv[1:]:
        rescore(Path(arg), detect)


if __name__ == "__main__":
    main()
