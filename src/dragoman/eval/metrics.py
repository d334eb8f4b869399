"""Scores per language pair and input kind: corpus chrF and BLEU (sacrebleu), and counts of the
failures a score hides.

- chrF (character 6-grams, beta 2) is the headline: it needs no tokenizer, so it is comparable
  across scripts. BLEU is tokenized for the target: `zh` for Chinese, characters for Japanese
  (sacrebleu's MeCab tokenizer is an extra install), `13a` for the rest, Korean included.
- A failed request scores as an empty output (and is counted under `errors`).
- wrong_language: the output detected as another language than the target. Judged only where
  the reference itself is detected as the target (`language_checked`), so a short string that
  reads the same in both languages ("Django", "OK") cannot count. The output is judged without
  the names and identifiers it copies from the source ("Tappuah", "UUID", `master_doc`): they
  belong to no language, and a verse of names read as Dutch (benchmarks/results/
  eval-avx512bf16-2core/wrong-language.md); every other word, an English echo's included, stays.
- over_3x: outputs more than 3 times the source's length, in Latin-letter equivalents (a Han
  or kana character counts 3, a Hangul syllable 2: about what each carries next to English).
- guard_stopped: finish_reason `repetition` (dragoman's loop guard cut the output);
  length_stopped: `length` (the output budget ran out; a loop nothing stopped ends here).
- preamble: the output announces or comments on the translation ("Here is the translation:",
  "French:", a first line ending in a colon that the source has no counterpart for).
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Sequence
from typing import Any

from dragoman.eval.client import Output
from dragoman.eval.sets import KINDS, EvalItem
from dragoman.languages import NAMES

Detect = Callable[[Sequence[str]], list[str | None]]

_TALK = re.compile(r"translat|tradu[cçz]|übersetz|翻译|翻訳|译文|번역", re.IGNORECASE)
_NATIVE_NAMES = ("français", "deutsch", "español", "中文", "日本語", "한국어", "italiano")
_LANGUAGE_LABEL = re.compile(
    r"\s*[\"'*]*(?:" + "|".join(map(re.escape, [*NAMES.values(), *_NATIVE_NAMES])) + r")[\"'*]*"
    r"\s*(?:\([^)]*\))?\s*[:：]",
    re.IGNORECASE,
)


def bleu_tokenizer(target: str) -> str:
    return {"zh": "zh", "ja": "char"}.get(target, "13a")


def has_preamble(output: str, source: str) -> bool:
    out, src = output.strip(), source.strip()
    if not out:
        return False
    first = out.partition("\n")[0]
    if _TALK.search(first) and not _TALK.search(src):
        return True
    if _LANGUAGE_LABEL.match(first) and not _LANGUAGE_LABEL.match(src):
        return True
    src_lines = len([line for line in src.splitlines() if line.strip()])
    out_lines = len([line for line in out.splitlines() if line.strip()])
    return (
        first.rstrip().endswith((":", "："))
        and out_lines > src_lines
        and not any(c in src.partition("\n")[0] for c in ":：")
    )


_WIDE = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff]")
_HANGUL = re.compile(r"[\uac00-\ud7af]")


def text_length(text: str) -> int:
    text = text.strip()
    return len(text) + 2 * len(_WIDE.findall(text)) + len(_HANGUL.findall(text))


def over_length(output: str, source: str, ratio: float = 3.0) -> bool:
    return text_length(output) > ratio * text_length(source)


_EDGE = "\"'“”‘’«»„()[]{}<>,;:.!?¡¿…"
_CLOSERS = "\"'”’»)]"
_SENTENCE_END = (".", "!", "?", ":")


def copied_names(source: str) -> set[str]:
    """The source's words that are names or identifiers, not words of its language: capitalized
    other than at a sentence's start ("Yahweh", "Django" mid-sentence), or with a capital,
    digit, underscore, dot or slash inside ("UUID", "iPhone", "conf.py", `master_doc`)."""
    words = source.split()
    names: set[str] = set()
    for n, raw in enumerate(words):
        word = raw.strip(_EDGE)
        if not any(c.isalpha() for c in word):
            continue
        starts = n == 0 or words[n - 1].rstrip(_CLOSERS).endswith(_SENTENCE_END)
        inner = any(c.isdigit() or c in "_./" or c.isupper() for c in word[1:])
        if inner or (word[0].isupper() and not starts):
            names.add(word)
    return names


def without_copied_names(output: str, source: str) -> str:
    """`output` without the words it copies verbatim from the source's names. Unchanged when it
    is the source again (an echo of "Content Types" is judged whole) or when nothing with
    letters would be left (an output that is only a name)."""
    if output.strip().casefold() == source.strip().casefold():
        return output
    names = copied_names(source)
    kept = " ".join(w for w in output.split() if w.strip(_EDGE) not in names)
    return kept if any(c.isalpha() for c in kept) else output


def lingua_detect(codes: Sequence[str] | None = None) -> Detect:
    """The project's detector (lingua), over every language dragoman knows by default: an
    output drifting into a third language is caught, not forced into one of the pair's two."""
    from dragoman.detect import LanguageDetector

    detector = LanguageDetector(list(codes or NAMES))

    def detect(texts: Sequence[str]) -> list[str | None]:
        return [d.language for d in detector.detect_many(list(texts))]

    return detect


def _score(items: Sequence[EvalItem], outputs: Sequence[Output]) -> tuple[float, float, str]:
    from sacrebleu.metrics import BLEU, CHRF

    hyps = [o.text.strip() if o.ok else "" for o in outputs]
    refs = [[i.reference for i in items]]
    chrf = CHRF()
    targets = {i.target_lang for i in items}
    tokenize = bleu_tokenizer(next(iter(targets))) if len(targets) == 1 else "13a"
    bleu = BLEU(tokenize=tokenize, effective_order=True)
    return chrf.corpus_score(hyps, refs).score, bleu.corpus_score(hyps, refs).score, tokenize


def _group(
    items: Sequence[EvalItem], outputs: Sequence[Output], languages: Sequence[tuple[bool, bool]]
) -> dict[str, Any]:
    chrf, bleu, tokenize = _score(items, outputs)
    ok = [(i, o) for i, o in zip(items, outputs, strict=True) if o.ok]
    checked = [wrong for (judged, wrong), o in zip(languages, outputs, strict=True) if judged]
    seconds = [o.seconds for _, o in ok]
    return {
        "n": len(items),
        "chrf": round(chrf, 2),
        "bleu": round(bleu, 2),
        "bleu_tokenize": tokenize,
        "errors": len(items) - len(ok),
        "wrong_language": sum(checked),
        "language_checked": len(checked),
        "over_3x": sum(over_length(o.text, i.source) for i, o in ok),
        "guard_stopped": sum(o.finish_reason == "repetition" for _, o in ok),
        "length_stopped": sum(o.finish_reason == "length" for _, o in ok),
        "preamble": sum(has_preamble(o.text, i.source) for i, o in ok),
        "mean_seconds": round(sum(seconds) / len(seconds), 3) if seconds else None,
    }


def language_checks(
    items: Sequence[EvalItem], outputs: Sequence[Output], detect: Detect
) -> list[tuple[bool, bool]]:
    """Per item: (judged: the reference reads as the target and the request succeeded,
    wrong: the output, without the names it copies from the source, does not read as the
    target)."""
    refs = detect([i.reference for i in items])
    outs = detect(
        [
            without_copied_names(o.text, i.source) if o.ok else ""
            for i, o in zip(items, outputs, strict=True)
        ]
    )
    return [
        (ref == i.target_lang and o.ok, out != i.target_lang)
        for i, o, ref, out in zip(items, outputs, refs, outs, strict=True)
    ]


def evaluate(
    items: Sequence[EvalItem], outputs: Sequence[Output], detect: Detect
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(rows of `score`, records of `item_records`), detecting languages once."""
    languages = language_checks(items, outputs, detect)
    return score(items, outputs, languages), item_records(items, outputs, languages)


def score(
    items: Sequence[EvalItem], outputs: Sequence[Output], languages: Sequence[tuple[bool, bool]]
) -> list[dict[str, Any]]:
    """One row per pair and kind, then one per pair over all its kinds (kind "all"), in the
    order pairs first appear."""
    groups: dict[tuple[str, str], list[int]] = defaultdict(list)
    for n, item in enumerate(items):
        groups[(item.pair, item.kind)].append(n)
        groups[(item.pair, "all")].append(n)
    kind_order = {k: i for i, k in enumerate((*KINDS, "all"))}
    pair_order = {p: i for i, p in enumerate(dict.fromkeys(i.pair for i in items))}
    rows = []
    for pair, kind in sorted(groups, key=lambda g: (pair_order[g[0]], kind_order[g[1]])):
        idx = groups[(pair, kind)]
        row = _group(
            [items[n] for n in idx], [outputs[n] for n in idx], [languages[n] for n in idx]
        )
        rows.append({"pair": pair, "kind": kind, **row})
    return rows


def item_records(
    items: Sequence[EvalItem], outputs: Sequence[Output], languages: Sequence[tuple[bool, bool]]
) -> list[dict[str, Any]]:
    """One record per item: the texts, the answer and its per-item chrF, for reading failures."""
    from sacrebleu.metrics import CHRF

    chrf = CHRF()
    records = []
    for item, out, (judged, wrong) in zip(items, outputs, languages, strict=True):
        records.append(
            {
                "id": item.id,
                "kind": item.kind,
                "origin": item.origin,
                "source": item.source,
                "reference": item.reference,
                **out.as_dict(),
                "chrf": round(chrf.sentence_score(out.text, [item.reference]).score, 2),
                "wrong_language": judged and wrong,
                "over_3x": out.ok and over_length(out.text, item.source),
                "preamble": out.ok and has_preamble(out.text, item.source),
            }
        )
    return records
