"""Sentence segmentation with sentencex (lossless: its pieces concatenate to the input exactly),
for translating the sentences of a text as concurrent engine requests and putting the answer
back together with the original whitespace, newlines and paragraph breaks.

Modes, as DeepL's `split_sentences`: "1" splits at sentence ends and newlines, "nonewlines" at
sentence ends only (a newline inside a sentence stays inside it), "0" not at all. In every mode
a piece longer than `max_chars` is cut further (at a clause mark, else a space, else anywhere;
never inside a placeholder, which but for code counts as the `{1}` the model gets for it): a
long sentence is never refused for its length. Texts up to `min_chars` with no newline stay
one piece whatever the mode: a short UI string keeps its context."""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Iterable, Sequence
from typing import Literal, NamedTuple

import regex
import sentencex

from dragoman.text.placeholders import spans

SplitMode = Literal["0", "1", "nonewlines"]

_SENTENCE_END = re.compile(r"[.!?…。！？][\"'”’»)\]]*$")
_CLAUSE = re.compile(r"[,;:，；：、。]\s*")
_SPACE = re.compile(r"\s+")
# Where a long run of text may be cut for sentencex: after a sentence end (a Latin one only
# before a space: "3.14", "e.g" and URLs hold full stops), else at a space.
_STOP = re.compile(r"[.!?…][\"'”’»)\]]*\s+|[。！？][」』”’)）]*\s*")
_WINDOW = 1_000
_GRAPHEME = regex.compile(r"\X")
# Every line break str.splitlines knows but the separators \x1c-\x1e: a lone CR (old Mac
# files), U+2028/U+2029 (JavaScript strings) and \v (Word's manual line break) end a line
# too; a CR before a newline is one break with it.
_BREAK = re.compile("[\n\r\u2028\u2029\x85\x0b\x0c]")
_LINES = re.compile("(?<=[\n\u2028\u2029\x85\x0b\x0c])(?=.)|(?<=\r)(?=[^\n])", re.DOTALL)


class Piece(NamedTuple):
    lead: str
    """Whitespace before the text (kept as is)."""
    core: str
    """The text to translate; empty for whitespace only."""
    trail: str
    """Whitespace after the text (kept as is)."""


# A list item's marker is layout, not text: it stays as it is ("- ", "* ", "• ", "1. ", "2) ").
_BULLET = re.compile(r"(?:[-*•·–]|\d{1,3}[.)])[ \t]+(?=\S)")
_BULLET_ONLY = re.compile(r"\s*\d{1,3}[.)][ \t]+")


# What a piece's text is trimmed of, kept as layout: whitespace (as str.isspace) and the
# invisible marks a model drops (a byte order mark opening a file, zero-width spaces).
_LAYOUT = (
    "\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005"
    "\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff\u200b\u2060"
)


def _piece(raw: str) -> Piece:
    core = raw.strip(_LAYOUT)
    if not core:
        return Piece(raw, "", "")
    start = raw.index(core[0])
    bullet = _BULLET.match(raw, start)
    if bullet:
        start = bullet.end()
        core = raw[start:].rstrip(_LAYOUT)
    return Piece(raw[:start], core, raw[start + len(core) :])


Spans = Sequence[tuple[int, int]]


def _inside(whole: Spans, at: int) -> tuple[int, int] | None:
    """The span of `whole` (sorted, apart) that a cut at `at` would part, if any."""
    k = bisect_left(whole, (at,)) - 1  # the last span starting before `at`
    return whole[k] if k >= 0 and at < whole[k][1] else None


def _cut(
    core: str,
    max_chars: int,
    marks: tuple[re.Pattern[str], ...] = (_CLAUSE, _SPACE),
    whole: Spans = (),
    origin: int = 0,
) -> list[str]:
    """`core` in parts of at most `max_chars`, cut after the last of the first of `marks`
    that fits in the second half (a clause mark, else a space), else hard; never inside a
    span of `whole` (placeholders, offsets from `core`'s start at `origin`): a part holding
    one longer than `max_chars` is longer (the model sees it as a token). The parts
    concatenate to `core`."""
    parts = []
    base = 0
    while len(core) - base > max_chars:
        window = core[base : base + max_chars + 1]
        at = max_chars
        for mark in marks:
            ends = [
                m.end()
                for m in mark.finditer(window)
                if max_chars // 2 <= m.end() <= max_chars
                and not _inside(whole, origin + base + m.end())
            ]
            if ends:
                at = ends[-1]
                break
        else:
            span = _inside(whole, origin + base + at)
            if span is not None:  # before the placeholder, else after it
                at = max(span[0] - origin - base, 0) or span[1] - origin - base
            else:
                at = _character_start(core, base, at)
                # a placeholder's last character and a mark on it (`<0>` and an accent, code
                # and a joiner) are one character: the cut moved back inside it
                span = _inside(whole, origin + base + at)
                if span is not None:
                    at = max(span[0] - origin - base, 0) or _character_end(
                        core, base, span[1] - origin - base
                    )
        parts.append(core[base : base + at])
        base += at
    parts.append(core[base:])
    return parts


def _cut_masked(core: str, max_chars: int, whole: Spans, origin: int) -> list[str]:
    """`core` in parts as `_cut` makes them, each placeholder counted at the length of the
    token the model gets for it (`{1}`, `{2}`, numbered in `core`: a part's own numbers are no
    longer) rather than its own: a sentence around a 5,000-character key was cut into three
    requests, the key's `{1}` alone in one, where the model sees 100 characters. Fenced and
    inline code count at their length: their backticks may pair otherwise in a part than in
    the whole text, and each part is masked on its own; the other placeholders are found in
    a part as in the whole text, or inside a larger one. None is cut. An empty list when
    `core` fits in `max_chars` counted so."""
    end = origin + len(core)
    first = bisect_left(whole, (origin,))
    last = bisect_left(whole, (end,), first)
    if first == last or whole[last - 1][1] > end or (first and whole[first - 1][1] > origin):
        # none inside, or one across an end of `core` (kept whole by `_cut` as before)
        return _cut(core, max_chars, whole=whole, origin=origin)
    # The core as the model sees it, and where each of the spans stands in it.
    parts: list[str] = []
    kept: list[tuple[int, int]] = []  # tokens, and spans counted at their length
    saved: list[int] = []  # characters saved by each of them and those before it
    at, size, gained, n = origin, 0, 0, 0
    for a, b in whole[first:last]:
        if core[a - origin] not in "`~":
            n += 1
            token = f"{{{n}}}"
        else:
            token = core[a - origin : b - origin]
        parts += (core[at - origin : a - origin], token)
        size += a - at
        kept.append((size, size + len(token)))
        size += len(token)
        gained += b - a - len(token)
        saved.append(gained)
        at = b
    parts.append(core[at - origin :])
    compact = "".join(parts)
    if len(compact) <= max_chars:
        return []
    # `_cut` cuts inside none of them: each cut is back in `core` past those before it.
    out, start, stop = [], 0, 0
    for part in _cut(compact, max_chars, whole=kept):
        stop += len(part)
        k = bisect_left(kept, (stop,))  # the spans that end at or before the cut
        cut = stop + (saved[k - 1] if k else 0)
        out.append(core[start:cut])
        start = cut
    return out


def _character_start(core: str, base: int, at: int) -> int:
    """`at` (a hard cut from `base`) moved back to where the user-perceived character (the
    extended grapheme cluster) it falls in starts: a cut between a letter and its accent,
    inside an emoji sequence, between a flag's two letters or a Hangul syllable's jamo gave
    the model half of it. Unmoved when one runs the whole part. Clusters are told from
    `base`, a cut's end, which is a cluster's start."""
    i = base + at
    for cluster in _GRAPHEME.finditer(core, base, i + 1):
        if cluster.end() > i:
            return cluster.start() - base if cluster.start() > base else at
    return at


def _character_end(core: str, base: int, at: int) -> int:
    """`at` (a cut from `base` right after a placeholder) moved on to where the
    user-perceived character its last character is part of ends."""
    cluster = _GRAPHEME.match(core, base + at - 1)
    return cluster.end() - base if cluster else at


def _keep_whole(raws: list[str], whole: Spans) -> list[str]:
    """`raws` (which make up the text) joined again wherever one ends inside a span of
    `whole`: a sentence end or a line inside a placeholder (a URL's "?a=1.2 ") parts it."""
    if not whole:
        return raws
    groups: list[list[str]] = []
    at = 0
    held = False  # the cut after the last group falls inside a span: the next raw joins it
    for raw in raws:
        if held:
            groups[-1].append(raw)
        else:
            groups.append([raw])
        at += len(raw)
        held = _inside(whole, at) is not None
    return ["".join(g) for g in groups]


def _segment(language: str, text: str) -> list[str]:
    """sentencex's sentences of `text`, given it a window of at most `_WINDOW` characters at a
    time, each cut after a sentence end: on longer input it drops paragraph breaks (past ~10 KB:
    a 13.5 KB text came back 4 characters short) and takes time quadratic in unclosed quotes
    (100,000 of them held the event loop 10 s)."""
    if len(text) <= _WINDOW:
        return list(sentencex.segment(language, text))
    parts = _cut(text, _WINDOW, (_STOP, _SPACE))
    return [s for part in parts for s in sentencex.segment(language, part)]


def _merge_markers(raws: list[str]) -> list[str]:
    """A piece that is only a list marker ("1. " at a line start, which sentencex ends as a
    sentence) joins the next, so the marker stays layout and is never an engine request."""
    out: list[str] = []
    for raw in raws:
        if out and _BULLET_ONLY.fullmatch(out[-1]):
            out[-1] += raw
        else:
            out.append(raw)
    return out


def _merge_soft_breaks(raws: list[str]) -> list[str]:
    """nonewlines: a piece that ends at a newline without ending a sentence joins the next."""
    groups: list[list[str]] = []
    # Whether the last group's text ends no sentence; told from its last raw with text (a
    # test of the whole group at each raw was quadratic: 100 KB of headings took 20 s).
    open_ = False
    for raw in raws:
        if open_:
            groups[-1].append(raw)
        else:
            groups.append([raw])
        if raw.strip():
            open_ = not _SENTENCE_END.search(raw.rstrip())
    return ["".join(g) for g in groups]


def split(
    text: str, language: str, mode: SplitMode = "1", max_chars: int = 300, min_chars: int = 200
) -> list[Piece]:
    """The pieces of `text`; "".join(lead + core + trail) == text."""
    if mode == "0" or (len(text) <= min_chars and not _BREAK.search(text.strip())):
        raws = [text]
    else:
        if mode == "nonewlines":
            raws = _merge_soft_breaks(_segment(language, text))
        else:  # every line on its own, then its sentences
            raws = [s for line in _LINES.split(text) for s in _segment(language, line)]
        raws = _merge_markers(raws)
    # A placeholder is never cut: one on a line, or a block of fenced code (its lines went
    # to the model one by one). Other spans across lines ({{ with a }} far on) are cut as any.
    whole = [
        (a, b)
        for a, b in spans(text)
        if not _BREAK.search(text, a, b) or text.startswith(("```", "~~~"), a)
    ]
    raws = _keep_whole(raws, whole)
    pieces: list[Piece] = []
    at = 0
    for raw in raws:
        piece = _piece(raw)
        at += len(raw)
        if len(piece.core) <= max_chars:
            pieces.append(piece)
            continue
        origin = at - len(raw) + len(piece.lead)
        parts = _cut_masked(piece.core, max_chars, whole, origin)
        if not parts:  # it fits once its placeholders are counted as the model sees them
            pieces.append(piece)
            continue
        for i, part in enumerate(parts):
            cut = _piece(part)
            lead = (piece.lead if i == 0 else "") + cut.lead
            trail = cut.trail + (piece.trail if i == len(parts) - 1 else "")
            pieces.append(Piece(lead, cut.core, trail))
    return pieces


def join(pieces: Iterable[Piece], translations: Iterable[str]) -> str:
    """The text with each non-empty piece's core replaced by its translation (in order)."""
    out = []
    it = iter(translations)
    for p in pieces:
        out.append(p.lead + (next(it) if p.core else "") + p.trail)
    return "".join(out)
