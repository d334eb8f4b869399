"""One Markdown row per `dragoman eval` run: chrF over all kinds and wrong language per pair,
and the run's wall time.

    python benchmarks/prompts/table.py benchmarks/results/eval-avx512bf16-2core/prompts/*/eval.json
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def main() -> None:
    runs = [Path(a) for a in sys.argv[1:]]
    pairs: list[str] = []
    for run in runs:
        for row in json.loads(run.read_text())["summary"]:
            if row["kind"] == "all" and row["pair"] not in pairs:
                pairs.append(row["pair"])
    print("| run | " + " | ".join(f"{p} chrF / wrong" for p in pairs) + " | s |")
    print("|---|" + "---|" * (len(pairs) + 1))
    for run in runs:
        results = json.loads(run.read_text())
        rows = {r["pair"]: r for r in results["summary"] if r["kind"] == "all"}
        cells = [
            f"{rows[p]['chrf']:.1f} / {rows[p]['wrong_language']}/{rows[p]['language_checked']}"
            if p in rows
            else "-"
            for p in pairs
        ]
        elapsed = results["meta"]["elapsed_s"]
        print(f"| {run.parent.name} | " + " | ".join(cells) + f" | {elapsed:.0f} |")


if __name__ == "__main__":
    main()
