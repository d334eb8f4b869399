"""How far the pick could go: for the first PER_PAIR texts of each pair and kind of
`dragoman eval`'s set, ask the server at URL for K candidates with K-1 alternatives
(`/v1/translate`, `candidates`, `alternatives`), then score against the references the greedy
outputs of an eval run of the same texts (GREEDY: its eval.json, `--candidates 1`), the pick,
and the oracle: of the pick and its alternatives, the one closest to the reference (sentence
chrF). Corpus chrF per pair. Writes OUT/oracle.json (every text) and OUT/oracle.md.

    python benchmarks/candidates/oracle.py URL K PER_PAIR GREEDY OUT
    python benchmarks/candidates/oracle.py --score OUT GREEDY   # score a fetched oracle.json
"""

from __future__ import annotations

import asyncio
import collections
import json
import statistics
import sys
from pathlib import Path
from typing import Any

import httpx
from sacrebleu.metrics import CHRF

from dragoman.eval import sets

PAIRS = [("en", t) for t in ("fr", "de", "es", "ko", "zh", "ja")]
KINDS = ["ui", "sentence", "paragraph"]


async def fetch(url: str, k: int, per_pair: int) -> dict[str, Any]:
    items = sets.build(PAIRS, KINDS, per_pair, 0)
    out: dict[str, Any] = {}
    gate = asyncio.Semaphore(4)
    async with httpx.AsyncClient(base_url=url, timeout=600) as client:

        async def one(item: sets.EvalItem) -> None:
            body = {
                "text": item.source,
                "source_lang": item.source_lang,
                "target_lang": item.target_lang,
                "candidates": k,
                "alternatives": k - 1,
            }
            async with gate:
                r = await client.post("/v1/translate", json=body)
            r.raise_for_status()
            t = r.json()["translations"][0]
            out[item.id] = {
                "pair": item.pair,
                "kind": item.kind,
                "source": item.source,
                "ref": item.reference,
                "pick": t["text"],
                "alts": t.get("alternatives") or [],
            }

        await asyncio.gather(*(one(i) for i in items))
    return {"k": k, "per_pair": per_pair, "url": url, "items": out}


def score(fetched: dict[str, Any], greedy_run: dict[str, Any]) -> dict[str, Any]:
    chrf = CHRF()
    greedy = {it["id"]: it for it in greedy_run["items"]}
    by: dict[str, dict[str, list[str]]] = collections.defaultdict(
        lambda: {"greedy": [], "pick": [], "oracle": [], "ref": []}
    )
    for id_, v in sorted(fetched["items"].items()):
        if greedy[id_]["source"] != v["source"]:
            raise ValueError(f"{id_}: the greedy run holds another text")
        cands = [v["pick"], *v["alts"]]
        best = max(cands, key=lambda c: chrf.sentence_score(c, [v["ref"]]).score)
        d = by[v["pair"]]
        d["greedy"].append(greedy[id_]["text"] or "")
        d["pick"].append(v["pick"])
        d["oracle"].append(best)
        d["ref"].append(v["ref"])
    rows = {
        pair: {
            name: round(chrf.corpus_score(d[name], [d["ref"]]).score, 2)
            for name in ("greedy", "pick", "oracle")
        }
        | {"n": len(d["ref"])}
        for pair, d in sorted(by.items())
    }
    mean = {
        name: round(statistics.mean(r[name] for r in rows.values()), 2)
        for name in ("greedy", "pick", "oracle")
    }
    alternatives = statistics.mean(len(v["alts"]) for v in fetched["items"].values())
    return {"pairs": rows, "mean": mean, "alternatives_per_text": round(alternatives, 2)}


def markdown(result: dict[str, Any], k: int, host: str) -> str:
    lines = [
        f"Host: {host}. k = {k} candidates; corpus chrF against the references.",
        "",
        "| pair | texts | greedy | pick | oracle |",
        "|---|---|---|---|---|",
    ]
    for pair, r in result["pairs"].items():
        lines.append(f"| {pair} | {r['n']} | {r['greedy']} | {r['pick']} | {r['oracle']} |")
    m = result["mean"]
    lines.append(f"| mean | | {m['greedy']} | {m['pick']} | {m['oracle']} |")
    lines += ["", f"Distinct alternatives per text: {result['alternatives_per_text']}", ""]
    return "\n".join(lines)


def main(argv: list[str]) -> None:
    if argv[0] == "--score":
        out, greedy_path = Path(argv[1]), Path(argv[2])
        fetched = json.loads((out / "oracle.json").read_text())
    else:
        url, k, per_pair, greedy_path, out = (
            argv[0],
            int(argv[1]),
            int(argv[2]),
            *map(Path, argv[3:5]),
        )
        fetched = asyncio.run(fetch(str(url), k, per_pair))
        out.mkdir(parents=True, exist_ok=True)
    greedy_run = json.loads(greedy_path.read_text())
    result = score(fetched, greedy_run)
    fetched["score"] = result
    (out / "oracle.json").write_text(json.dumps(fetched, ensure_ascii=False, indent=1))
    host = str(greedy_run["meta"].get("machine", "unknown host"))
    (out / "oracle.md").write_text(markdown(result, fetched["k"], host))
    print(markdown(result, fetched["k"], host))


if __name__ == "__main__":
    main(sys.argv[1:])
