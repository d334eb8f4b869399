"""A subtitle cue's text as one segment, and back (SubRip and WebVTT).

The tags of a cue (`<i>`, `<b>`, `<font color=..>`, WebVTT's `<c.yellow>`, `<v Bob>`, timestamps;
SubRip's `{\\an8}`) are never shown to the model as they are: the service masks only its own
markers in plain text, so a model would see, and might translate, `<font color="red">`.
- Tags only at the starts and ends of lines (the commonest: a cue in italics, a line in
  italics): they are kept as layout, and the cue goes out as plain text, a line a line; the
  service keeps the line breaks, so each line gets its own tags back (if the line count
  changed, all the leading tags go first and all the trailing ones last).
- Tags inside a line: the cue goes out as an XML fragment with each paired tag a `<gN>` and every
  other tag, and each line break, an `<xN/>` (files/inline.py); the service keeps the markers,
  and one the translation lost is put back.
WebVTT's character references (`&amp;`, `&lt;`, `&nbsp;`) are decoded for the model and the
three WebVTT needs written back as references."""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, field

from lxml import etree

from dragoman.files.base import Segment
from dragoman.files.inline import Item, Marked, Piece, Placed, Span, Void, mark, place
from dragoman.text.letters import has_letters

# A tag: `<...>` on one line, or an ASS override `{\\...}`. Negated classes: linear.
_TAG = re.compile(r"<[^<>\n]*+>|\{\\[^{}\n]*+\}")
_OPEN = re.compile(r"<([A-Za-z][\w-]*+)")
_CLOSE = re.compile(r"</\s*+([A-Za-z][\w-]*+)\s*+>")
_BREAK = "\n"
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


@dataclass
class _Line:
    lead: str
    body: str
    trail: str


@dataclass
class CueText:
    """A cue's text taken apart: `segment` goes out, `render` puts a translation back."""

    segment: Segment
    entities: bool
    lines: list[_Line] = field(default_factory=list)
    """Plain mode: each line's tags."""
    marked: Marked | None = None
    tags: dict[Span | Void, tuple[str, str]] = field(default_factory=dict)
    """Markers mode: each marker's tags (opening and closing; a standalone tag and "")."""

    def render(self, translated: str) -> str:
        if self.marked is not None:
            return self._write(place(self.marked, translated))
        out = translated.split("\n")
        if self.entities:
            out = [_escape(line) for line in out]
        if len(out) == len(self.lines):
            return "\n".join(a.lead + t + a.trail for a, t in zip(self.lines, out, strict=True))
        lead = "".join(a.lead for a in self.lines)
        return lead + "\n".join(out) + "".join(a.trail for a in self.lines)

    def _write(self, pieces: list[Piece]) -> str:
        out: list[str] = []
        for piece in pieces:
            if isinstance(piece, str):
                out.append(_escape(piece) if self.entities else piece)
            elif isinstance(piece, Placed):
                opening, closing = self.tags[piece.span]
                out += [opening, self._write(piece.pieces), closing]
            else:
                out.append(self.tags[piece][0])
        return "".join(out)


def _escape(text: str) -> str:
    return html.escape(text, quote=False)


def read_cue(text: str, entities: bool) -> CueText | None:
    """The cue's segment, or None when it holds nothing to translate (no letters).
    `entities`: WebVTT, whose text holds character references."""
    lines = [_split_line(line) for line in text.split("\n")]
    if all(line is not None for line in lines):
        kept = [line for line in lines if line is not None]
        body = "\n".join(line.body for line in kept)
        if entities:
            body = html.unescape(body)
        return CueText(Segment(body), entities, lines=kept) if has_letters(body) else None
    cue = CueText(Segment(""), entities)
    marked = mark(_items(text, entities, cue.tags))
    if not marked.translatable:
        return None
    cue.segment, cue.marked = Segment(marked.text, "xml"), marked
    return cue


def _split_line(line: str) -> _Line | None:
    """A line whose tags are all at its start or end, as (tags, text, tags); None otherwise."""
    tags = list(_TAG.finditer(line))
    if not tags:
        return _Line("", line, "")
    start = 0
    for m in tags:
        if m.start() != start:
            break
        start = m.end()
    end = len(line)
    for m in reversed(tags):
        if m.end() != end:
            break
        end = m.start()
    if end < start:  # only tags: the line is all lead
        return _Line(line, "", "")
    if any(start <= m.start() and m.end() <= end for m in tags):
        return None
    return _Line(line[:start], line[start:end], line[end:])


def _items(text: str, entities: bool, tags: dict[Span | Void, tuple[str, str]]) -> list[Item]:
    """The cue as items: paired tags (same name, properly nested) as spans, the other tags and
    each line break as objects kept whole."""
    pieces: list[str | re.Match[str]] = []
    at = 0
    for m in _TAG.finditer(text):
        pieces += [text[at : m.start()], m]
        at = m.end()
    pieces.append(text[at:])
    pairs = _pairs(pieces)
    ends = set(pairs.values())
    top: list[Item] = []
    stack = [top]
    for i, piece in enumerate(pieces):
        if isinstance(piece, str):
            for j, line in enumerate((html.unescape(piece) if entities else piece).split("\n")):
                if j:
                    stack[-1].append(_void(tags, _BREAK))
                line = _NOT_XML.sub("", line)  # the service's XML parser would refuse it
                if line:
                    stack[-1].append(line)
        elif i in pairs:
            end = pieces[pairs[i]]
            span = Span(None, None)
            tags[span] = (piece.group(), end.group() if isinstance(end, re.Match) else "")
            stack[-1].append(span)
            stack.append(span.items)
        elif i in ends:
            stack.pop()
        else:
            stack[-1].append(_void(tags, piece.group()))
    return top


def _void(tags: dict[Span | Void, tuple[str, str]], tag: str) -> Void:
    void = Void(etree.Element("tag"))
    tags[void] = (tag, "")
    return void


def _pairs(pieces: list[str | re.Match[str]]) -> dict[int, int]:
    """Opening tag index -> its closing tag's index, for tags properly nested. An opening tag
    left open inside a pair is not paired; each is popped once: linear."""
    stack: list[tuple[str, int]] = []
    counts: dict[str, int] = {}
    pairs: dict[int, int] = {}
    for i, piece in enumerate(pieces):
        if isinstance(piece, str):
            continue
        tag = piece.group()
        close = _CLOSE.fullmatch(tag)
        if close:
            name = close.group(1).lower()
            if counts.get(name):
                while stack:
                    top, at = stack.pop()
                    counts[top] -= 1
                    if top == name:
                        pairs[at] = i
                        break
            continue
        opened = _OPEN.match(tag)
        if opened and not tag.endswith("/>"):
            name = opened.group(1).lower()
            stack.append((name, i))
            counts[name] = counts.get(name, 0) + 1
    return pairs
