"""Compare sentence segmenters on a small gold set of the languages dragoman serves: boundary
precision / recall / F1 per language, lossless round-trip, and speed on this host.

    uv pip install pysbd==0.3.4 blingfire==0.1.8   # benchmark only, not runtime dependencies
    python benchmarks/segmenters/compare.py --out benchmarks/results/segmenters-<label>

Gold: `gold.jsonl` beside this file, one text a line as its sentences; the text is their
concatenation (whitespace belongs to the sentence before it). A boundary is where a sentence's
first non-space character sits, so segmenters that differ only in where they put whitespace
score alike. Each candidate runs twice: on the whole text ("raw") and after a split at
newlines, as dragoman's `split_sentences=1` does before the segmenter ("lines"). `dragoman` is
our own `dragoman.text.segment.split` (sentencex plus the newline split and list markers), with
the short-text and over-length rules turned off. A candidate that is not installed, or that
refuses a language (pysbd has no Korean), is reported as such and scores nothing there.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import itertools
import json
import platform
import re
import statistics
import subprocess
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

GOLD = Path(__file__).with_name("gold.jsonl")
_LINES = re.compile(r"(?<=\n)(?=.)", re.DOTALL)

Pieces = list[str]  # consecutive pieces of the text; for a lossy segmenter, spans (start, end)


def _sentencex(text: str, lang: str) -> list[tuple[int, int]]:
    import sentencex

    return _spans_of(text, list(sentencex.segment(lang, text)))


_PYSBD: dict[str, Any] = {}


def _pysbd(text: str, lang: str) -> list[tuple[int, int]]:
    import pysbd

    if lang not in _PYSBD:
        _PYSBD[lang] = pysbd.Segmenter(language=lang, clean=False, char_span=True)
    return [(s.start, s.end) for s in _PYSBD[lang].segment(text)]


def _blingfire(text: str, lang: str) -> list[tuple[int, int]]:
    import blingfire

    _, offsets = blingfire.text_to_sentences_and_offsets(text)
    return [tuple(o) for o in offsets]  # type: ignore[misc]


def _dragoman(text: str, lang: str) -> list[tuple[int, int]]:
    from dragoman.text.segment import split

    spans, at = [], 0
    for p in split(text, lang, "1", max_chars=10**9, min_chars=0):
        raw = p.lead + p.core + p.trail
        spans.append((at, at + len(raw)))
        at += len(raw)
    return spans


def _spans_of(text: str, pieces: Pieces) -> list[tuple[int, int]]:
    """Spans of pieces that concatenate to `text`; None-like empty list if they do not."""
    spans, at = [], 0
    for piece in pieces:
        spans.append((at, at + len(piece)))
        at += len(piece)
    return spans


CANDIDATES: dict[str, tuple[str, Callable[[str, str], list[tuple[int, int]]]]] = {
    "sentencex": ("sentencex", _sentencex),
    "pysbd": ("pysbd", _pysbd),
    "blingfire": ("blingfire", _blingfire),
}


def _lossless(name: str, text: str, lang: str) -> bool:
    """Whether the candidate's own output (its pieces as it returns them) concatenates to `text`."""
    if name == "sentencex":
        import sentencex

        return "".join(sentencex.segment(lang, text)) == text
    if name == "pysbd":
        import pysbd

        return "".join(pysbd.Segmenter(language=lang, clean=False).segment(text)) == text
    if name == "blingfire":
        import blingfire

        return blingfire.text_to_sentences(text) == text  # joined by newlines
    if name == "dragoman":
        from dragoman.text.segment import split

        pieces = split(text, lang, "1", max_chars=10**9, min_chars=0)
        return "".join(p.lead + p.core + p.trail for p in pieces) == text
    raise ValueError(name)


def _by_lines(fn: Callable[[str, str], list[tuple[int, int]]]) -> Callable[..., Any]:
    def run(text: str, lang: str) -> list[tuple[int, int]]:
        spans, at = [], 0
        for line in _LINES.split(text):
            spans += [(at + s, at + e) for s, e in fn(line, lang)]
            at += len(line)
        return spans

    return run


def boundaries(text: str, starts: list[int]) -> set[int]:
    """Where each piece after the first starts its text (leading whitespace skipped)."""
    out = set()
    for start in starts:
        at = start
        while at < len(text) and text[at].isspace():
            at += 1
        if 0 < at < len(text) and text[:at].strip():
            out.add(at)
    return out


def load_gold() -> list[dict[str, Any]]:
    rows = [json.loads(line) for line in GOLD.read_text(encoding="utf-8").splitlines() if line]
    for row in rows:
        row["text"] = "".join(row["sentences"])
        at, starts = 0, []
        for s in row["sentences"]:
            starts.append(at)
            at += len(s)
        row["gold"] = boundaries(row["text"], starts)
    return rows


def _prf(tp: int, fp: int, fn: int) -> dict[str, float]:
    p = tp / (tp + fp) if tp + fp else 1.0
    r = tp / (tp + fn) if tp + fn else 1.0
    f = 2 * p * r / (p + r) if p + r else 0.0
    return {"precision": round(p, 3), "recall": round(r, 3), "f1": round(f, 3)}


def score(rows: list[dict[str, Any]], fn: Callable[[str, str], list[tuple[int, int]]]) -> Any:
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0, 0])  # tp fp fn exact n
    errors: dict[str, str] = {}
    misses: list[dict[str, Any]] = []
    for row in rows:
        lang, text = row["lang"], row["text"]
        c = counts[lang]
        try:
            pred = boundaries(text, [s for s, _ in fn(text, lang)])
        except Exception as e:  # a refused language is a result
            errors[lang] = f"{type(e).__name__}: {e}"[:200]
            pred = None
        gold = row["gold"]
        if pred is None:
            c[2] += len(gold)
        else:
            c[0] += len(gold & pred)
            c[1] += len(pred - gold)
            c[2] += len(gold - pred)
            c[3] += pred == gold
            if pred != gold:
                cuts = sorted(pred | {0, len(text)})
                misses.append(
                    {"id": row["id"], "got": [text[a:b] for a, b in itertools.pairwise(cuts)]}
                )
        c[4] += 1
    per_lang = {
        lang: _prf(*c[:3])
        | {"texts_exact": f"{c[3]}/{c[4]}"}
        | ({"error": errors[lang]} if lang in errors else {})
        for lang, c in counts.items()
    }
    total = [sum(c[i] for c in counts.values()) for i in range(5)]
    return per_lang, _prf(*total[:3]) | {"texts_exact": f"{total[3]}/{total[4]}"}, misses


def _time(fn: Callable[[], Any], budget_s: float = 1.0, max_runs: int = 200) -> float:
    """Median seconds of one call, repeated within a time budget (after one warm-up call)."""
    fn()
    runs: list[float] = []
    deadline = time.perf_counter() + budget_s
    while len(runs) < 3 or (time.perf_counter() < deadline and len(runs) < max_runs):
        t0 = time.perf_counter()
        fn()
        runs.append(time.perf_counter() - t0)
    return statistics.median(runs)


def speed(
    rows: list[dict[str, Any]], fn: Callable[[str, str], list[tuple[int, int]]], langs: list[str]
) -> dict[str, Any]:
    usable = []
    for row in rows:
        try:
            fn(row["text"], row["lang"])
            usable.append(row)
        except Exception:  # a refused language is not timed
            pass

    def all_texts() -> None:
        for row in usable:
            fn(row["text"], row["lang"])

    gold_s = _time(all_texts)
    out: dict[str, Any] = {"texts_per_s": round(len(usable) / gold_s), "us_per_kb": {}}
    for lang in langs:  # one ~10 KB document of the language's texts, as paragraphs
        texts = [r["text"] for r in usable if r["lang"] == lang]
        if not texts:
            continue
        doc = ""
        while len(doc.encode()) < 10_000:
            doc += "\n\n".join(texts) + "\n\n"
        kb = len(doc.encode()) / 1000
        out["us_per_kb"][lang] = round(_time(lambda d=doc, la=lang: fn(d, la)) / kb * 1e6, 1)
    return out


def scaling(fn: Callable[[str, str], list[tuple[int, int]]], rows: list[dict[str, Any]]) -> Any:
    """English, one paragraph with no newlines, at 1, 10 and 100 KB: ms per call."""
    base = " ".join(r["text"].replace("\n", " ") for r in rows if r["lang"] == "en")
    out = {}
    for kb in (1, 10, 100):
        doc = (base + " ") * (kb * 1000 // len(base) + 1)
        doc = doc[: kb * 1000]
        out[f"{kb}KB_ms"] = round(
            _time(lambda d=doc: fn(d, "en"), budget_s=2.0, max_runs=50) * 1e3, 2
        )
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    rows = load_gold()
    langs = sorted({r["lang"] for r in rows}, key=[r["lang"] for r in rows].index)
    results: dict[str, Any] = {}
    versions = {}
    for name, (package, fn) in CANDIDATES.items():
        try:
            versions[name] = importlib.metadata.version(package)
        except importlib.metadata.PackageNotFoundError:
            results[name] = {"skipped": f"{package} not installed"}
            continue
        for variant, run in (("raw", fn), ("lines", _by_lines(fn))):
            per_lang, overall, misses = score(rows, run)
            results[f"{name}/{variant}"] = {
                "overall": overall,
                "per_language": per_lang,
                "speed": speed(rows, run, langs),
                "misses": misses,
            }
        results[f"{name}/raw"]["scaling_en"] = scaling(fn, rows)
        lossless = {}
        for row in rows:
            try:
                lossless.setdefault(row["lang"], True)
                lossless[row["lang"]] &= _lossless(name, row["text"], row["lang"])
            except Exception:
                lossless[row["lang"]] = None  # type: ignore[assignment]
        results[f"{name}/raw"]["lossless"] = lossless
    per_lang, overall, misses = score(rows, _dragoman)
    results["dragoman"] = {
        "overall": overall,
        "per_language": per_lang,
        "speed": speed(rows, _dragoman, langs),
        "misses": misses,
        "lossless": {
            lang: all(_lossless("dragoman", r["text"], lang) for r in rows if r["lang"] == lang)
            for lang in langs
        },
    }
    meta = {
        "gold": {lang: sum(r["lang"] == lang for r in rows) for lang in langs},
        "boundaries": {
            lang: sum(len(r["gold"]) for r in rows if r["lang"] == lang) for lang in langs
        },
        "versions": versions,
        "python": platform.python_version(),
        "cpu_flags": subprocess.run(
            "grep -o 'avx512[a-z_0-9]*\\|amx[a-z_0-9]*' /proc/cpuinfo | sort -u",
            shell=True,
            capture_output=True,
            text=True,
            check=False,
        ).stdout.split(),
        "cores": len(__import__("os").sched_getaffinity(0)),
    }
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "results.json").write_text(
        json.dumps({"meta": meta, "results": results}, ensure_ascii=False, indent=1) + "\n",
        encoding="utf-8",
    )
    print(table(meta, results, langs))


def table(meta: dict[str, Any], results: dict[str, Any], langs: list[str]) -> str:
    head = (
        "| segmenter | " + " | ".join(langs) + " | all F1 | exact | texts/s | µs/KB en | µs/KB zh |"
    )
    lines = [head, "|" + "---|" * (len(langs) + 6)]
    for name, r in results.items():
        if "skipped" in r:
            continue
        f1 = [
            "-"
            if "error" in r["per_language"].get(la, {})
            else f"{r['per_language'][la]['f1']:.2f}"
            for la in langs
        ]
        sp = r["speed"]
        lines.append(
            f"| {name} | "
            + " | ".join(f1)
            + f" | {r['overall']['f1']:.3f} | {r['overall']['texts_exact']} | {sp['texts_per_s']}"
            + f" | {sp['us_per_kb'].get('en', '-')} | {sp['us_per_kb'].get('zh', '-')} |"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    main()
