"""`dragoman bench --files`: what translating a Word file costs beside its text. One real
server; a DOCX of --files-paragraphs paragraphs (Bible verse runs of 5-60 tokens, a word in
bold every few paragraphs, as a document's emphasis) translated three ways, from English to
French: as a file through DeepL's document API with the real `deepl` client (upload, status
polls, download), as the same paragraphs' texts in one list to /v1/translate (every segment in
flight at once), and one paragraph per request, one after another (a loop over the text API).
The file and the list alternate (file, list, list, file) so a host whose speed drifts slows both
alike; the loop runs over the first --files-sequential paragraphs and is scaled to the whole
(the same paragraphs' share of the list's characters). The cache is off: every pass is real
engine work. Traffic goes to 127.0.0.1 only."""

from __future__ import annotations

import random
import statistics
import time
from pathlib import Path
from typing import Any

import httpx
from rich.console import Console

from dragoman.bench.settings import BenchSettings
from dragoman.eval.workloads import approx_tokens, bible_verses

FILE_OVER_LIST_LIMIT = 1.3
"""The file may take at most this much the time of its texts as one list."""
LOOP_OVER_FILE_MIN = 5.0
"""A loop of one request per paragraph must take at least this much the file's time."""


def paragraphs(n: int, seed: int = 0) -> list[str]:
    """`n` paragraphs of consecutive verses, 5-60 tokens each (log-uniform: many short)."""
    rng = random.Random(seed)
    verses = bible_verses()
    out = []
    for _ in range(n):
        want = round(5 * 12 ** rng.random())
        start = rng.randrange(len(verses))
        parts: list[str] = []
        total = 0
        for verse in verses[start : start + 8]:
            if parts and total + approx_tokens(verse) > want * 1.2:
                break
            parts.append(verse)
            total += approx_tokens(verse)
        out.append(" ".join(parts))
    return out


def write_docx(texts: list[str], path: Path) -> None:
    """A Word file of `texts`, one paragraph each; every fifth paragraph's first word bold."""
    import docx

    document = docx.Document()
    for i, text in enumerate(texts):
        p = document.add_paragraph()
        first, _, rest = text.partition(" ")
        if i % 5 == 0 and rest:
            p.add_run(first).bold = True
            p.add_run(" " + rest)
        else:
            p.add_run(text)
    document.save(str(path))


def read_docx(path: Path) -> list[str]:
    import docx

    return [p.text for p in docx.Document(str(path)).paragraphs]


def through_file(url: str, source: Path, out: Path) -> float:
    """Seconds for the `deepl` client's document translation, upload to download."""
    import deepl

    translator = deepl.Translator("bench", server_url=url)
    started = time.perf_counter()
    translator.translate_document_from_filepath(source, out, source_lang="EN", target_lang="FR")
    return time.perf_counter() - started


def as_list(client: httpx.Client, texts: list[str]) -> tuple[float, list[str]]:
    """Seconds for the texts as one list, and their translations."""
    started = time.perf_counter()
    body = {"text": texts, "source_lang": "en", "target_lang": "fr"}
    r = client.post("/v1/translate", json=body)
    r.raise_for_status()
    out = [t["text"] for t in r.json()["translations"]]
    if len(out) != len(texts):
        raise RuntimeError("the list came back short")
    return time.perf_counter() - started, out


def unchanged(sources: list[str], outs: list[str]) -> set[int]:
    """The paragraphs that came back as they were sent (a missing one counts)."""
    return {i for i, s in enumerate(sources) if i >= len(outs) or outs[i] == s}


def one_by_one(client: httpx.Client, texts: list[str]) -> float:
    started = time.perf_counter()
    for text in texts:
        client.post(
            "/v1/translate", json={"text": text, "source_lang": "en", "target_lang": "fr"}
        ).raise_for_status()
    return time.perf_counter() - started


COUNTED = {
    "output_tokens": 'dragoman_translation_tokens_total{direction="output"}',
    "input_tokens": 'dragoman_translation_tokens_total{direction="input"}',
    "retries": "dragoman_validation_retries_total",
    "repairs": "dragoman_repairs_total",
    "translations": "dragoman_translations_total",
}


def counters(client: httpx.Client) -> dict[str, float]:
    """The server's own counts of what its engine did (summed over their labels): a pass's
    work is the difference before and after it."""
    text = client.get("/metrics").text
    out = dict.fromkeys(COUNTED, 0.0)
    for line in text.splitlines():
        if line.startswith("#"):
            continue
        name, _, value = line.rpartition(" ")
        if 'outcome="repaired"' in name:
            continue  # put back without a second request: not a reply asked again
        for key, metric in COUNTED.items():
            if name == metric or (name.startswith(metric + "{") and "{" not in metric):
                out[key] += float(value)
    return out


def verdicts(out: dict[str, Any]) -> dict[str, bool]:
    """Each target met or not, from the figures alone."""
    return {
        "file_vs_list": 0 < out["file_over_list"] <= FILE_OVER_LIST_LIMIT,
        "loop_vs_file": out["loop_over_file"] >= LOOP_OVER_FILE_MIN,
        "translated": out["lost_in_file"] == 0,
    }


def summarise(
    file_s: list[float],
    list_s: list[float],
    loop_s: float,
    loop_share: float,
    in_file: set[int] | None = None,
    in_list: set[int] | None = None,
) -> dict[str, Any]:
    """The ratios, from the passes' medians; the loop scaled from its share of the text."""
    file_m, list_m = statistics.median(file_s), statistics.median(list_s)
    loop_whole = loop_s / loop_share
    return {
        "file_seconds": file_s,
        "list_seconds": list_s,
        "loop_seconds": loop_s,
        "loop_share": loop_share,
        "loop_whole_seconds": loop_whole,
        "file_over_list": file_m / list_m,
        "loop_over_file": loop_whole / file_m,
        # Paragraphs the file brought back as they were: the model's own misses (a name
        # list, a reply left in English) the list has too; those only the file has are lost
        # by the file's path, which must lose none.
        "unchanged_in_file": sorted(in_file or ()),
        "unchanged_in_list": sorted(in_list or ()),
        "lost_in_file": len((in_file or set()) - (in_list or set())),
    }


def run_files(s: BenchSettings, meta: dict[str, Any], console: Console) -> dict[str, Any]:
    from dragoman.bench.servers import engine_flags, launch_dragoman

    texts = paragraphs(s.files_paragraphs, s.seed)
    work = s.out / "files"
    work.mkdir(parents=True, exist_ok=True)
    source = work / "document.docx"
    write_docx(texts, source)
    n = len(texts)
    # One list must fit in one request: --max-items at least the paragraphs (the document's
    # job then makes one call too); no cache, so every pass is engine work.
    flags = [*engine_flags(s), "--cache-mib", "0", "--max-items", str(max(64, n))]
    flags += ["--max-admitted", "0", "--request-timeout", "3600"]
    server = launch_dragoman(work, *flags)
    file_s: list[float] = []
    list_s: list[float] = []
    work_done: list[dict[str, Any]] = []
    in_list: set[int] = set()
    try:
        with httpx.Client(base_url=server.url, timeout=3600) as client:
            console.log("warm-up")
            as_list(client, texts[:8])
            for step, kind in enumerate(("file", "list", "list", "file")):
                console.log(f"pass {step + 1}: {n} paragraphs as {kind}")
                before = counters(client)
                if kind == "file":
                    file_s.append(through_file(server.url, source, work / f"out-{step}.docx"))
                else:
                    seconds, outs = as_list(client, texts)
                    list_s.append(seconds)
                    in_list |= unchanged(texts, outs)
                after = counters(client)
                work_done.append({"pass": kind, **{k: after[k] - before[k] for k in after}})
            k = min(s.files_sequential, n)
            console.log(f"one request per paragraph, the first {k}")
            loop_s = one_by_one(client, texts[:k])
    finally:
        server.stop()
    share = sum(map(len, texts[:k])) / sum(map(len, texts))
    in_file = unchanged(texts, read_docx(work / "out-0.docx"))
    in_file |= unchanged(texts, read_docx(work / "out-3.docx"))
    out = summarise(file_s, list_s, loop_s, share, in_file, in_list)
    characters = sum(map(len, texts))
    return {
        "paragraphs": n,
        "characters": characters,
        "sequential": k,
        **out,
        "engine_work": work_done,
        "meta": meta,
    }


def markdown(out: dict[str, Any]) -> str:
    met = verdicts(out)
    word = {True: "MET", False: "MISSED"}
    file_m, list_m = statistics.median(out["file_seconds"]), statistics.median(out["list_seconds"])
    return "\n".join(
        [
            f"# A Word file against its text: {out['meta']['machine']}",
            "",
            f"{out['paragraphs']:,} paragraphs ({out['characters']:,} characters), English to "
            "French, cache off. Reproduce: `dragoman bench --files --out DIR`.",
            "",
            "| way | seconds (each pass) | median |",
            "|---|---|---|",
            f"| the file, DeepL's document API (`deepl` client) | "
            f"{', '.join(f'{v:.1f}' for v in out['file_seconds'])} | {file_m:.1f} |",
            f"| its texts as one list, /v1/translate | "
            f"{', '.join(f'{v:.1f}' for v in out['list_seconds'])} | {list_m:.1f} |",
            f"| one request per paragraph (the first {out['sequential']}, "
            f"{100 * out['loop_share']:.0f}% of the text) | {out['loop_seconds']:.1f} | "
            f"{out['loop_whole_seconds']:.1f} scaled to the whole |",
            "",
            "What the engine did in each pass (the server's own counters):",
            "",
            "| pass | output tokens | input tokens | replies asked again | repairs |",
            "|---|---|---|---|---|",
            *(
                f"| {w['pass']} | {w['output_tokens']:,.0f} | {w['input_tokens']:,.0f} | "
                f"{w['retries']:,.0f} | {w['repairs']:,.0f} |"
                for w in out.get("engine_work", [])
            ),
            "",
            f"- file / list: {out['file_over_list']:.2f}x (target at most "
            f"{FILE_OVER_LIST_LIMIT:g}x): **{word[met['file_vs_list']]}**",
            f"- one at a time / file: {out['loop_over_file']:.2f}x (target at least "
            f"{LOOP_OVER_FILE_MIN:g}x): **{word[met['loop_vs_file']]}**",
            f"- paragraphs back as they were: {len(out['unchanged_in_file'])} in the file "
            f"(passes 1 and 4), {len(out['unchanged_in_list'])} in the list (passes 2 and 3); "
            f"in the file only, lost by its path: {out['lost_in_file']} (target 0): "
            f"**{word[met['translated']]}**",
            "",
        ]
    )
