"""Glossaries: term pairs a request carries (or DeepL's stored glossaries name). Each sentence
is sent with the pairs whose source term it holds, and the prompt asks the model to use them;
afterwards each text reports the terms whose target the translation lacks (the 0.5B model does
not always comply: the report says so rather than hiding it). Stored glossaries are each its
creator's (with API keys on, a key sees, uses and deletes only its own) and are kept as files in
a directory (glossary_files.py) or in a Redis-protocol server (glossary_shared.py): they
outlive a restart, and servers given the same directory or server share them."""

from __future__ import annotations

import asyncio
import csv
import datetime as dt
import io
import json
import logging
import re
import uuid
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from functools import lru_cache
from typing import Protocol, TypeVar

import ahocorasick

from dragoman.engine.prompts import PLACEHOLDERS
from dragoman.engine.protocol import Terms
from dragoman.errors import DragomanError, InvalidRequest
from dragoman.text.markup.markers import without_markers

MAX_ENTRIES = 5000
MAX_TERM_CHARS = 200
MAX_ENTRIES_CHARS = MAX_ENTRIES * 1024  # DeepL's bound is 1,024 bytes an entry
MAX_LINES = 4 * MAX_ENTRIES  # blank lines and CRLF ends included
MAX_GLOSSARIES = 100
"""Stored at once by one key (by everyone when keys are off): memory is bounded."""
MAX_NAME_CHARS = 256

log = logging.getLogger(__name__)


class GlossaryNotFound(DragomanError):
    status_code = 404
    code = "glossary_not_found"


class GlossaryStoreFailed(DragomanError):
    """The glossary store cannot be written or read (a directory full or read-only, a store
    down or silent): nothing was changed."""

    status_code = 503
    code = "glossary_store_error"


@lru_cache(maxsize=4096)
def _pattern(term: str) -> re.Pattern[str]:
    # Whole words for scripts with spaces; CJK terms match anywhere (no word boundaries).
    return re.compile(r"(?<!\w)" + re.escape(term) + r"(?!\w)", re.IGNORECASE)


def holds(text: str, term: str) -> bool:
    return _pattern(term).search(text) is not None or (
        not term.isascii() and term.lower() in text.lower()
    )


# A combining mark is part of its word: "İ" lowers to "i" and a combining dot, which must not
# make "PHONE" in "İPHONE" a word of its own.
_WORD = re.compile(r"[\w\u0300-\u036f]")


class TermIndex:
    """A glossary's source terms in one Aho-Corasick automaton, built once per glossary: a
    text is scanned once for all of them (a term at a time cost a regex search per term per
    sentence, and 5,000 terms held the event loop for seconds). A term is found as `holds`
    finds it: in any case, as whole words, or anywhere when it is not ASCII (CJK has no
    spaces between words)."""

    def __init__(self, glossary: Terms) -> None:
        self.glossary = glossary
        self._automaton = ahocorasick.Automaton()
        for i, (source, _) in enumerate(glossary):
            key = source.lower()
            found = self._automaton.get(key, None)
            if found is None:
                self._automaton.add_word(key, (len(key), not source.isascii(), [i]))
            else:
                found[2].append(i)  # the same term in another case, or in two glossaries
        self._automaton.make_automaton()

    @classmethod
    def of(cls, glossary: Terms) -> TermIndex:
        """The index of `glossary`, built once for the glossaries in use (ask once a request:
        hashing a large glossary costs tens of microseconds)."""
        return _INDEXES.get(glossary) or _keep(cls(glossary))

    def held(self, text: str) -> Terms:
        """The pairs whose source term `text` holds, in the glossary's order."""
        if not self.glossary:
            return ()
        low, hits = text.lower(), set()
        for end, (n, anywhere, pairs) in self._automaton.iter(low):
            start = end - n + 1
            if anywhere or (
                (start == 0 or not _WORD.match(low, start - 1))
                and (end + 1 == len(low) or not _WORD.match(low, end + 1))
            ):
                hits.update(pairs)
        return tuple(self.glossary[i] for i in sorted(hits))


# Indexes of the glossaries in use, the least recently asked dropped first past a bound in
# terms (5,000 long terms take ~50 MB indexed), not in glossaries.
_INDEXES: dict[Terms, TermIndex] = {}
MAX_INDEXED_TERMS = 50_000
BUILT_OFF_LOOP = 1_000
"""Terms from which an index is built in a thread: 5,000 long terms take half a second."""


def _keep(index: TermIndex) -> TermIndex:
    _INDEXES[index.glossary] = index
    total = sum(map(len, _INDEXES))
    while total > MAX_INDEXED_TERMS and len(_INDEXES) > 1:
        oldest = next(iter(_INDEXES))
        total -= len(oldest)
        del _INDEXES[oldest]
    return index


async def index_of(glossary: Terms) -> TermIndex:
    """`TermIndex.of` for a request: a large glossary's index is built off the event loop."""
    index = _INDEXES.pop(glossary, None)  # asked again: the most recent
    if index is None and len(glossary) >= BUILT_OFF_LOOP:
        index = await asyncio.to_thread(TermIndex, glossary)
    return _keep(index or TermIndex(glossary))


def terms_in(text: str, index: TermIndex | None) -> Terms:
    """The pairs whose source term `text` (a unit: markers and placeholder tokens are not its
    words) holds."""
    if index is None:  # the commonest: every unit of every request asks
        return ()
    return index.held(_words([text]))


def missed(sources: list[str], translations: list[str], index: TermIndex) -> list[str]:
    """Source terms the units sent to the model hold whose target term their translations
    lack. Units, not documents: a tag or attribute name of the markup around them is no term
    (`<b>` held no "B"), and the inline markers in them are not words."""
    translation = _words(translations)
    return [s for s, t in index.held(_words(sources)) if not holds(translation, t)]


def _words(units: list[str]) -> str:
    # Nor are the placeholders' tokens: "{1}" held the term "1" for a text without one.
    text = without_markers("\n".join(units))
    if "{" in text:
        text = PLACEHOLDERS.sub(" ", text)
    return _SPACES.sub(" ", text)


_SPACES = re.compile(r"[^\S\n]+")


# C0 and C1 controls and Unicode line breaks: a term holding one would break the TSV that
# `GET /v2/glossaries/{id}/entries` answers, and DeepL refuses them too.
_LINES = re.compile(r"\r\n|\n|\r")
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def check_entries(entries: Terms) -> Terms:
    if len(entries) > MAX_ENTRIES:
        raise InvalidRequest(f"a glossary holds at most {MAX_ENTRIES} entries")
    for s, t in entries:
        # before the spaces around a term are stripped: str.strip takes some controls too
        if _CONTROL.search(s) or _CONTROL.search(t):
            raise InvalidRequest("glossary terms must not hold control characters or line breaks")
    stripped = tuple((s.strip(), t.strip()) for s, t in entries)
    for s, t in stripped:
        if not s or not t:
            raise InvalidRequest("glossary terms must not be empty")
        if len(s) > MAX_TERM_CHARS or len(t) > MAX_TERM_CHARS:
            raise InvalidRequest(f"glossary terms are at most {MAX_TERM_CHARS} characters")
    return stripped


def parse_entries(text: str, fmt: str, source: str, target: str) -> Terms:
    """DeepL's entries for a `source`->`target` glossary, as DeepL reads them: `source<TAB>target`
    lines (tsv), or CSV rows of two terms, optionally followed by the row's source and target
    language (rows of another pair are skipped). Blank lines are skipped; no entry, a line
    without its two terms, a tsv line with a second tab and a source term given twice are
    refused."""
    text = text.removeprefix("\ufeff")  # a spreadsheet's export: no part of the first term
    # Bounded before any line is read: a body of millions of blank lines or copies of one
    # line cost seconds and hundreds of MB to refuse.
    if len(text) > MAX_ENTRIES_CHARS:
        raise InvalidRequest(f"glossary entries are at most {MAX_ENTRIES_CHARS} characters")
    if text.count("\n") + text.count("\r") > MAX_LINES:
        raise InvalidRequest(
            f"a glossary holds at most {MAX_ENTRIES} entries; these have over {MAX_LINES} lines"
        )
    if fmt == "tsv":
        lines = _LINES.split(text)  # not str.splitlines: U+2028 and the like are not lines here
        rows = [(i, line.split("\t")) for i, line in enumerate(lines, 1)]
        rows = [(i, r) for i, r in rows if "".join(r).strip()]
        extra = next((i for i, r in rows if len(r) > 2), None)
        if extra is not None:
            raise InvalidRequest(f"glossary entry on line {extra} has more than one tab")
    elif fmt == "csv":
        try:
            rows = [(i, r) for i, r in enumerate(csv.reader(io.StringIO(text)), 1)]
        except csv.Error as exc:  # a field over the reader's limit, a NUL byte
            raise InvalidRequest(f"glossary entries are not valid CSV: {exc}") from None
        rows = [(i, r) for i, r in rows if "".join(r).strip()]
        pair = (_base(source), _base(target))
        rows = [(i, r) for i, r in rows if len(r) < 4 or (_base(r[2]), _base(r[3])) == pair]
    else:
        raise InvalidRequest(f"entries_format must be tsv or csv, not {fmt!r}")
    bad = next((i for i, r in rows if len(r) < 2), None)
    if bad is not None:
        raise InvalidRequest(f"glossary entry on line {bad} has no target term")
    if not rows:
        raise InvalidRequest("Invalid glossary entries provided: no entries")
    first: dict[str, int] = {}
    for i, r in rows:
        at = first.setdefault(r[0].strip(), i)
        if at != i:
            raise InvalidRequest(
                f"glossary entry on line {i} repeats the source term of line {at}: {r[0].strip()!r}"
            )
    return check_entries(tuple((r[0], r[1]) for _, r in rows))


def _base(code: str) -> str:
    """A language code's primary subtag, lower case: "EN-GB" and "en" name the same source."""
    return code.strip().lower().partition("-")[0]


@dataclass(frozen=True)
class Glossary:
    glossary_id: str
    name: str
    source_lang: str
    target_lang: str
    entries: Terms
    creation_time: str
    owner: str | None = None
    """The key that made it (its digest); None when keys are off."""

    def summary(self) -> Summary:
        return Summary(
            self.glossary_id,
            self.name,
            self.source_lang,
            self.target_lang,
            self.creation_time,
            len(self.entries),
            self.owner,
        )


@dataclass(frozen=True)
class Summary:
    """A glossary as a list shows it, without its entries: a list of 100 glossaries of 5,000
    long entries would otherwise read and parse over a GB."""

    glossary_id: str
    name: str
    source_lang: str
    target_lang: str
    creation_time: str
    entry_count: int
    owner: str | None = None


_ID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def made(name: str, source: str, target: str, entries: Terms, owner: str | None = None) -> Glossary:
    """A new glossary, its name and entries checked, with a fresh id and the time now."""
    if not name.strip():
        raise InvalidRequest("a glossary needs a name")
    if len(name) > MAX_NAME_CHARS:
        raise InvalidRequest(f"a glossary's name is at most {MAX_NAME_CHARS} characters")
    entries = check_entries(entries)
    now = dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
    return Glossary(str(uuid.uuid4()), name, source, target, entries, now, owner)


def too_many() -> InvalidRequest:
    return InvalidRequest(
        f"at most {MAX_GLOSSARIES} glossaries are stored for a key: delete one first"
    )


def not_found(glossary_id: str) -> GlossaryNotFound:
    return GlossaryNotFound(f"glossary {glossary_id!r} not found")


def is_id(glossary_id: str) -> bool:
    """An id this server could have made (also what keeps a path or a key name out)."""
    return _ID.fullmatch(glossary_id) is not None


_Listed = TypeVar("_Listed", Glossary, Summary)


def oldest_first(glossaries: Iterable[_Listed]) -> list[_Listed]:
    return sorted(glossaries, key=lambda g: (g.creation_time, g.glossary_id))


def to_json(g: Glossary) -> str:
    # UTF-8, not \uXXXX escapes: 5,000 long non-ASCII entries took 12 MB, not 4, to store and
    # read back (within the store's 1 s bound at each first use)
    return json.dumps({**asdict(g), "entries": [list(e) for e in g.entries]}, ensure_ascii=False)


def from_json(text: str | bytes, glossary_id: str) -> Glossary:
    """The glossary `to_json` wrote for `glossary_id`; ValueError for anything else (another
    id's, other types: a file edited by hand)."""
    try:
        raw = json.loads(text)
        g = Glossary(**{**raw, "entries": tuple((s, t) for s, t in raw["entries"])})
    except (TypeError, KeyError) as exc:
        raise ValueError(f"not a glossary: {exc!r}") from None
    _check(g, glossary_id)
    if not all(isinstance(v, str) for pair in g.entries for v in pair):
        raise ValueError("its entries are not text")
    return g


def summary_to_json(s: Summary) -> str:
    return json.dumps(asdict(s))


def summary_from_json(text: str | bytes, glossary_id: str) -> Summary:
    """The summary `summary_to_json` wrote for `glossary_id`; ValueError for anything else."""
    try:
        s = Summary(**json.loads(text))
    except TypeError as exc:
        raise ValueError(f"not a glossary's summary: {exc!r}") from None
    _check(s, glossary_id)
    if type(s.entry_count) is not int:
        raise ValueError("its entry count is not a number")
    return s


def _check(g: Glossary | Summary, glossary_id: str) -> None:
    texts = (g.glossary_id, g.name, g.source_lang, g.target_lang, g.creation_time)
    if g.glossary_id != glossary_id or not all(isinstance(v, str) for v in texts):
        raise ValueError("not this id's glossary")
    if not (g.owner is None or isinstance(g.owner, str)):
        raise ValueError("its owner is not text")


class Glossaries(Protocol):
    """Where stored glossaries are kept, as the DeepL surface asks for them: files
    (glossary_files.py) or a Redis-protocol server (glossary_shared.py). Entered by the app's
    lifespan."""

    async def identity(self) -> str | None:
        """Names the store: servers sharing one report the same (`dragoman route` passes
        glossary requests only to a fleet that shares its glossaries); None: this server's
        own memory, or not known yet."""

    async def create(
        self, name: str, source: str, target: str, entries: Terms, owner: str | None
    ) -> Glossary: ...

    async def owned(self, owner: str | None) -> list[Summary]:
        """`owner`'s glossaries, oldest first, without their entries."""

    async def get(self, glossary_id: str, owner: str | None) -> Glossary:
        """The glossary, if `owner` made it: another key's is not found, as one never made."""

    async def delete(self, glossary_id: str, owner: str | None) -> None: ...

    async def __aenter__(self) -> Glossaries: ...

    async def __aexit__(self, *exc: object) -> None: ...
