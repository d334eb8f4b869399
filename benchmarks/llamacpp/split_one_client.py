"""One client, the same paragraphs cut into sentences (`split_sentences` "1", the default) or
sent whole ("0"), against a running `dragoman serve`: does cutting a paragraph up buy a
single user any time on this host's engine?

Each paragraph (four sentences, over --min-split-chars so the default cuts it) goes to each
target both ways, in turns (which way goes first alternates), with a fresh suffix each round
so no answer comes from the cache or a slot's kept prompt; a first pass per target, not
counted, has every pair's prompt prefix computed. Start the server with `--cache-mib 0`.

    python benchmarks/llamacpp/split_one_client.py URL OUT [--rounds 2]

Writes OUT/split-one-client.json and .md. Traffic goes to the URL given (127.0.0.1).
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path
from typing import Any

import httpx

from dragoman.host import detect

PARAGRAPHS = (
    "The meeting was moved to Thursday because the room was not available on Tuesday. Please "
    "bring the printed report with you, and the notes from the last meeting. We will start at "
    "nine and finish before lunch. Coffee will be served in the hall.",
    "Click the button at the bottom of the page to save your changes. Your settings are kept "
    "for thirty days on our servers. After that, they are removed unless you sign in again. "
    "You can export them at any time from the account page.",
    "The river rose during the night and covered the road to the market. The farmers moved "
    "their animals to the hills before dawn. By morning the water had reached the first "
    "houses of the village. Nobody was hurt, but many fields were lost.",
)
TARGETS = ("zh", "fr", "de")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("url")
    p.add_argument("out", type=Path)
    p.add_argument("--rounds", type=int, default=2)
    args = p.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    c = httpx.Client(base_url=args.url, timeout=600)

    def send(text: str, target: str, split: str) -> dict[str, Any]:
        body = {"text": text, "source_lang": "en", "target_lang": target, "split_sentences": split}
        started = time.perf_counter()
        r = c.post("/v1/translate", json=body)
        r.raise_for_status()
        item = r.json()["translations"][0]
        return {
            "target": target,
            "split": split,
            "seconds": time.perf_counter() - started,
            "output_tokens": item["output_tokens"],
            "input_tokens": item["input_tokens"],
            "queue_seconds": item["queue_seconds"],
        }

    for target in TARGETS:  # every pair's prefix computed before anything is counted
        send(PARAGRAPHS[0][:120] + " (warm-up)", target, "1")
    records = []
    for r in range(args.rounds):
        for i, text in enumerate(PARAGRAPHS):
            for target in TARGETS:
                ways = ("1", "0") if (r + i) % 2 == 0 else ("0", "1")
                for split in ways:
                    records.append(send(f"{text} ({r})", target, split))
    rows = {}
    for split in ("1", "0"):
        mine = [x for x in records if x["split"] == split]
        rows[split] = {
            "texts": len(mine),
            "seconds": sum(x["seconds"] for x in mine),
            "median_s": statistics.median(x["seconds"] for x in mine),
            "output_tokens": sum(x["output_tokens"] for x in mine),
            "queue_seconds": sum(x["queue_seconds"] for x in mine),
        }
    result = {"machine": detect().label(), "url": args.url, "rows": rows, "records": records}
    (args.out / "split-one-client.json").write_text(json.dumps(result, indent=1) + "\n")
    lines = [
        f"Host: {result['machine']}; {len(PARAGRAPHS)} paragraphs of four sentences x "
        f"{len(TARGETS)} targets x {args.rounds} rounds, one client, each way in turns.",
        "",
        "| split_sentences | texts | total s | median s | output tokens | output tok/s | "
        "queue s (sum) |",
        "|---|---|---|---|---|---|---|",
    ]
    for split, row in rows.items():
        lines.append(
            f"| {split} | {row['texts']} | {row['seconds']:.1f} | {row['median_s']:.2f} | "
            f"{row['output_tokens']} | {row['output_tokens'] / row['seconds']:.1f} | "
            f"{row['queue_seconds']:.2f} |"
        )
    lines += ["", f"cut up / whole, total time: {rows['1']['seconds'] / rows['0']['seconds']:.3f}"]
    (args.out / "split-one-client.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
