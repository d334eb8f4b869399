"""Glossaries: term pairs a request carries (or DeepL's stored glossaries name). Each sentence
is sent with the pairs whose source term it holds, and the prompt asks the model to use them;
afterwards each text reports the terms whose target the translation lacks (the 0.5B model does
not always comply: the report says so rather than hiding it). Stored glossaries live in memory,
per server."""

from __future__ import annotations

import csv
import datetime as dt
import io
import re
import uuid
from dataclasses import dataclass, field
from functools import lru_cache

from dragoman.engine.protocol import Terms
from dragoman.errors import DragomanError, InvalidRequest

MAX_ENTRIES = 5000
MAX_TERM_CHARS = 200


class GlossaryNotFound(DragomanError):
    status_code = 404
    code = "glossary_not_found"


@lru_cache(maxsize=4096)
def _pattern(term: str) -> re.Pattern[str]:
    # Whole words for scripts with spaces; CJK terms match anywhere (no word boundaries).
    return re.compile(r"(?<!\w)" + re.escape(term) + r"(?!\w)", re.IGNORECASE)


def holds(text: str, term: str) -> bool:
    return _pattern(term).search(text) is not None or (
        not term.isascii() and term.lower() in text.lower()
    )


def terms_in(text: str, glossary: Terms) -> Terms:
    """The pairs whose source term `text` holds."""
    return tuple((s, t) for s, t in glossary if holds(text, s))


def missed(source: str, translation: str, glossary: Terms) -> list[str]:
    """Source terms the text holds whose target term the translation lacks."""
    return [s for s, t in glossary if holds(source, s) and not holds(translation, t)]


def check_entries(entries: Terms) -> Terms:
    if len(entries) > MAX_ENTRIES:
        raise InvalidRequest(f"a glossary holds at most {MAX_ENTRIES} entries")
    for s, t in entries:
        if not s.strip() or not t.strip():
            raise InvalidRequest("glossary terms must not be empty")
        if len(s) > MAX_TERM_CHARS or len(t) > MAX_TERM_CHARS:
            raise InvalidRequest(f"glossary terms are at most {MAX_TERM_CHARS} characters")
    return tuple((s.strip(), t.strip()) for s, t in entries)


def parse_entries(text: str, fmt: str) -> Terms:
    """DeepL's entries: `source<TAB>target` lines (tsv) or two-column CSV."""
    if fmt == "tsv":
        rows = [line.split("\t") for line in text.splitlines() if line.strip()]
    elif fmt == "csv":
        try:
            rows = [r for r in csv.reader(io.StringIO(text)) if r]
        except csv.Error as exc:  # a field over the reader's limit, a NUL byte
            raise InvalidRequest(f"glossary entries are not valid CSV: {exc}") from None
    else:
        raise InvalidRequest(f"entries_format must be tsv or csv, not {fmt!r}")
    bad = next((i for i, r in enumerate(rows, 1) if len(r) < 2), None)
    if bad is not None:
        raise InvalidRequest(f"glossary entry {bad} has no target term")
    return check_entries(tuple((r[0], r[1]) for r in rows))


@dataclass(frozen=True)
class Glossary:
    glossary_id: str
    name: str
    source_lang: str
    target_lang: str
    entries: Terms
    creation_time: str


@dataclass
class GlossaryStore:
    glossaries: dict[str, Glossary] = field(default_factory=dict)

    def create(self, name: str, source: str, target: str, entries: Terms) -> Glossary:
        now = dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
        g = Glossary(str(uuid.uuid4()), name, source, target, check_entries(entries), now)
        self.glossaries[g.glossary_id] = g
        return g

    def get(self, glossary_id: str) -> Glossary:
        try:
            return self.glossaries[glossary_id]
        except KeyError:
            raise GlossaryNotFound(f"glossary {glossary_id!r} not found") from None

    def delete(self, glossary_id: str) -> None:
        self.get(glossary_id)
        del self.glossaries[glossary_id]
