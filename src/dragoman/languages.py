"""ISO 639-1 codes and English names for the languages our models serve."""

from __future__ import annotations

import itertools
from collections.abc import Iterable

from dragoman.errors import UnsupportedLanguage

NAMES: dict[str, str] = {
    "ar": "Arabic",
    "cs": "Czech",
    "de": "German",
    "en": "English",
    "es": "Spanish",
    "fr": "French",
    "id": "Indonesian",
    "it": "Italian",
    "ja": "Japanese",
    "ko": "Korean",
    "nl": "Dutch",
    "pl": "Polish",
    "pt": "Portuguese",
    "ru": "Russian",
    "th": "Thai",
    "tr": "Turkish",
    "uk": "Ukrainian",
    "vi": "Vietnamese",
    "zh": "Chinese",
}


Pair = tuple[str, str]


def parse_pair(text: str) -> Pair:
    """'en-fr' -> ('en', 'fr')."""
    src, sep, tgt = text.strip().partition("-")
    if not sep or not src or not tgt:
        raise ValueError(f"language pair {text!r} is not of the form 'en-fr'")
    return src.lower(), tgt.lower()


def pairs_from_languages(languages: Iterable[str]) -> set[Pair]:
    """Every ordered pair of distinct languages: any-to-any among them."""
    return set(itertools.permutations(languages, 2))


def language_name(code: str) -> str:
    try:
        return NAMES[code]
    except KeyError:
        raise UnsupportedLanguage(f"unknown language code {code!r}") from None


def check_code(field: str, code: str, served: tuple[str, ...]) -> None:
    if code not in NAMES:
        raise UnsupportedLanguage(f"{field}: unknown language code {code!r} (ISO 639-1)")
    if code not in served:
        raise UnsupportedLanguage(f"{field}: {code!r} ({NAMES[code]}) is not served by this model")


def check_pair(source: str, target: str, served: tuple[str, ...]) -> None:
    check_code("source_lang", source, served)
    check_code("target_lang", target, served)
    if source == target:
        raise UnsupportedLanguage(f"source_lang and target_lang are both {source!r}")
