"""Parallel evaluation sets, a pure function of (pairs, kinds, items per pair, seed).

Three kinds of input, each with a human reference in the target language:

- `ui`: catalogue messages of 2-7 words ("Change password", "Enter a valid date.");
- `sentence`: catalogue messages of 8-40 words, mostly help and error texts;
- `paragraph`: 2-6 consecutive Bible verses, 60-130 English words.

Messages with placeholders or markup are left out: they measure markup handling, not
translation. Candidates are ranked by a hash of (seed, key), not shuffled per pair, so the
same English texts are picked for every pair that has them and a pair's set does not change
when another pair is added.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cache

from dragoman.eval import corpora

KINDS = ("ui", "sentence", "paragraph")
DEFAULT_PAIRS = ("en-fr", "en-de", "en-es", "en-ko", "en-zh", "en-ja")
_MARKUP = re.compile(r"%|\{|\}|<|>|\n|&\w+;|`|\*|\||::|\\")
UI_WORDS = (2, 7)
SENTENCE_WORDS = (8, 40)
PARAGRAPH_WORDS = (60, 130)
PARAGRAPH_VERSES = (2, 6)


@dataclass(frozen=True)
class EvalItem:
    id: str
    source_lang: str
    target_lang: str
    kind: str
    source: str
    reference: str
    origin: str
    """Where the text comes from: "catalogue" or "bible <book>:<chapter>:<verse>+<count>"."""

    @property
    def pair(self) -> str:
        return f"{self.source_lang}-{self.target_lang}"


def _rank(seed: int, keys: Iterable[str]) -> list[str]:
    return sorted(keys, key=lambda k: hashlib.sha256(f"{seed}\0{k}".encode()).hexdigest())


def _words(text: str) -> int:
    return len(text.split())


def _catalogue_items(source: str, target: str, kind: str, n: int, seed: int) -> list[EvalItem]:
    def side(lang: str) -> Callable[[str], str | None]:
        if lang == "en":
            return lambda en: en
        return corpora.catalogue(lang).get

    langs = [lang for lang in (source, target) if lang != "en"]
    keys = set(corpora.catalogue(langs[0]))
    for lang in langs[1:]:
        keys &= set(corpora.catalogue(lang))
    low, high = UI_WORDS if kind == "ui" else SENTENCE_WORDS
    keys = {k for k in keys if low <= _words(k) <= high and not _MARKUP.search(k)}
    src_of, ref_of = side(source), side(target)
    items: list[EvalItem] = []
    for key in _rank(seed, keys):
        src, ref = src_of(key), ref_of(key)
        if not src or not ref or _MARKUP.search(src + ref) or src.strip() == ref.strip():
            continue
        items.append(_item(source, target, kind, len(items), src, ref, "catalogue"))
        if len(items) == n:
            break
    return items


@cache
def _runs() -> dict[str, list[corpora.Verse]]:
    """Every run of consecutive verses of one chapter, from each verse, that reaches the
    paragraph length in English; keyed "book:chapter:verse"."""
    verses = corpora.bible("en")
    runs: dict[str, list[corpora.Verse]] = {}
    low, high = PARAGRAPH_WORDS
    for book, chapter, number in verses:
        run: list[corpora.Verse] = []
        words = 0
        while len(run) < PARAGRAPH_VERSES[1]:
            verse = (book, chapter, number + len(run))
            if verse not in verses:
                break
            run.append(verse)
            words += _words(verses[verse])
            if words >= low:
                break
        if PARAGRAPH_VERSES[0] <= len(run) and low <= words <= high:
            runs[f"{book}:{chapter}:{number}"] = run
    return runs


def _join(lang: str, parts: list[str]) -> str:
    return ("" if lang in ("zh", "ja") else " ").join(parts)


def _bible_items(source: str, target: str, n: int, seed: int) -> list[EvalItem]:
    english = corpora.bible("en")
    src_verses, ref_verses = corpora.bible(source), corpora.bible(target)
    items: list[EvalItem] = []
    taken: set[corpora.Verse] = set()
    runs = _runs()
    for key in _rank(seed, runs):
        run = runs[key]
        # The verse after the run must exist too: a translation that merges verses leaves the
        # next one empty, and its text would be inside this run's reference.
        after = (run[-1][0], run[-1][1], run[-1][2] + 1)
        need = [*run, after] if after in english else run
        if taken.intersection(run) or not all(v in src_verses and v in ref_verses for v in need):
            continue
        src = _join(source, [src_verses[v] for v in run])
        ref = _join(target, [ref_verses[v] for v in run])
        items.append(_item(source, target, "paragraph", len(items), src, ref, f"bible {key}"))
        taken.update(run)
        if len(items) == n:
            break
    return items


def _item(source: str, target: str, kind: str, i: int, src: str, ref: str, origin: str) -> EvalItem:
    return EvalItem(f"{source}-{target}/{kind}/{i:03d}", source, target, kind, src, ref, origin)


def languages_for(kind: str) -> set[str]:
    return set(corpora.BIBLES) if kind == "paragraph" else corpora.catalogue_languages()


def build(
    pairs: Iterable[tuple[str, str]], kinds: Iterable[str], per_pair: int, seed: int = 0
) -> list[EvalItem]:
    """`per_pair` items for each pair and kind (fewer only where the data runs out)."""
    items: list[EvalItem] = []
    for source, target in pairs:
        for kind in kinds:
            if kind not in KINDS:
                raise ValueError(f"unknown kind {kind!r}; choose from {', '.join(KINDS)}")
            missing = {source, target} - languages_for(kind)
            if missing:
                raise ValueError(
                    f"no {kind} data for {', '.join(sorted(missing))} "
                    f"(have: {', '.join(sorted(languages_for(kind)))})"
                )
            if kind == "paragraph":
                items += _bible_items(source, target, per_pair, seed)
            else:
                items += _catalogue_items(source, target, kind, per_pair, seed)
    return items
