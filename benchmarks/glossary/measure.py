"""How often does the model use the glossary terms it is given? Sends UI-style sentences that
each hold one glossary term to a running dragoman server (native API, `glossary`), and counts
the translations whose `glossary_missed` is empty. Same sentences without the glossary give the
baseline: how often the model would have produced the wanted term anyway.

    python benchmarks/glossary/measure.py --url http://127.0.0.1:8000 \
        --out benchmarks/results/glossary-<host>.json
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
from typing import Any

import httpx

from dragoman.host import detect

# (sentence, source term, target term) per target language: terms a UI glossary would fix.
CASES: dict[str, list[tuple[str, str, str]]] = {
    "fr": [
        ("Open the dashboard to see your usage.", "dashboard", "tableau de bord"),
        ("Your workspace has been archived.", "workspace", "espace de travail"),
        ("Click Sync to update the files.", "Sync", "Synchroniser"),
        ("The invoice was sent by e-mail.", "invoice", "facture"),
        ("Add a tag to find this note later.", "tag", "étiquette"),
        ("Share the link with your team.", "link", "lien"),
        ("Your subscription renews next month.", "subscription", "abonnement"),
        ("Delete the draft before you leave.", "draft", "brouillon"),
        ("The upload failed; try again.", "upload", "téléversement"),
        ("Check the logs for errors.", "logs", "journaux"),
    ],
    "de": [
        ("Open the dashboard to see your usage.", "dashboard", "Übersicht"),
        ("Your workspace has been archived.", "workspace", "Arbeitsbereich"),
        ("Click Sync to update the files.", "Sync", "Abgleichen"),
        ("The invoice was sent by e-mail.", "invoice", "Rechnung"),
        ("Add a tag to find this note later.", "tag", "Schlagwort"),
        ("Share the link with your team.", "link", "Verknüpfung"),
        ("Your subscription renews next month.", "subscription", "Abonnement"),
        ("Delete the draft before you leave.", "draft", "Entwurf"),
        ("The upload failed; try again.", "upload", "Hochladen"),
        ("Check the logs for errors.", "logs", "Protokolle"),
    ],
}


def _has(text: str, term: str) -> bool:
    return re.search(r"(?<!\w)" + re.escape(term) + r"(?!\w)", text, re.IGNORECASE) is not None


async def _one(
    c: httpx.AsyncClient, text: str, target: str, glossary: dict[str, str] | None
) -> str:
    body: dict[str, Any] = {"text": text, "source_lang": "en", "target_lang": target}
    if glossary:
        body["glossary"] = glossary
    r = await c.post("/v1/translate", json=body)
    r.raise_for_status()
    return str(r.json()["translations"][0]["text"])


async def main(url: str) -> dict[str, Any]:
    rows = []
    async with httpx.AsyncClient(base_url=url, timeout=600) as c:
        for target, cases in CASES.items():
            for text, src, tgt in cases:
                plain, guided = await asyncio.gather(
                    _one(c, text, target, None), _one(c, text, target, {src: tgt})
                )
                rows.append(
                    {
                        "target": target,
                        "text": text,
                        "term": [src, tgt],
                        "without_glossary": plain,
                        "with_glossary": guided,
                        "used_without": _has(plain, tgt),
                        "used_with": _has(guided, tgt),
                    }
                )
    summary = {
        t: {
            "cases": sum(r["target"] == t for r in rows),
            "used_with_glossary": sum(r["used_with"] for r in rows if r["target"] == t),
            "used_without": sum(r["used_without"] for r in rows if r["target"] == t),
        }
        for t in CASES
    }
    host = detect()
    return {"host": host.label(), "host_detail": host.as_dict(), "summary": summary, "rows": rows}


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    result = asyncio.run(main(args.url))
    with open(args.out, "w") as f:
        json.dump(result, f, indent=1, ensure_ascii=False)
    print(json.dumps(result["summary"], indent=1))
