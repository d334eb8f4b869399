"""XLIFF (.xlf, .xliff), 1.x (`trans-unit`, `source`, `target`) and 2.x (`unit`, `segment`,
`source`, `target`), parsed by files/xmlsafe.py (no entities, no DTD, no network; a DOCTYPE is
refused).

What is translated: a unit not marked `translate="no"` (on it or a group or file around it)
whose target is missing or empty, or whose state says it wants one (1.x `new` or
`needs-translation`, 2.x `initial`). A target with text in any other state is a translator's or
a tool's and is kept. A 1.x unit cut into `<mrk mtype="seg">` sentences in `seg-source` is
translated a sentence a segment, its target holding the same `mrk`s.

Inline elements are markers (files/inline.py): those with content (1.x `g`, `mrk`; 2.x `pc`,
`mrk`) are `<gN>`, the rest (`x`, `bx`, `ex`, `ph`, `bpt`, `ept`, `it`, `sc`, `ec`, `cp`,
`sm`, `em`, and any inline element marked `translate="no"` or 1.x `mtype="protected"`) `<xN/>`,
each written back with its attributes and content.

The state a machine translation gets: 1.x `state="translated"` with
`state-qualifier="leveraged-mt"` (a CAT tool shows it as machine translated and a reviewer can
filter on it; `needs-review-translation` would hide that the text came from a machine), 2.x
`state="translated"` on the segment (2.x has no review state before `reviewed`). `render_in`
also sets the files' target language (1.x `target-language`, 2.x `trgLang`)."""

from __future__ import annotations

import copy
from dataclasses import dataclass, field

from lxml import etree

from dragoman.errors import BadFile
from dragoman.files.base import FileFormat, Limits, Segment
from dragoman.files.inline import Item, Marked, Piece, Placed, Span, Void, add_text, mark, place
from dragoman.files.xmlsafe import parse, serialize

_PAIRED = {1: ("g", "mrk"), 2: ("pc", "mrk")}
_WANTS = {1: ("new", "needs-translation"), 2: ("initial",)}


@dataclass
class _Part:
    """A stretch translated as one segment: a source, or a `mrk` sentence of a seg-source."""

    items: list[Item]
    marked: Marked
    segment: int | None
    """Its index in the segments; None: nothing to translate, written back as it is."""

    def pieces(self, translated: list[str]) -> list[Piece]:
        if self.segment is None:
            return _as_pieces(self.items)
        text = translated[self.segment]
        return place(self.marked, text) if self.marked.marks else [text]


@dataclass
class _Unit:
    holder: etree._Element
    """1.x: the trans-unit; 2.x: the segment."""
    source: etree._Element
    """What the target copies: the source, or 1.x's seg-source."""
    parts: list[_Part]
    sentences: bool
    """1.x seg-source: each part is one of the source's `mrk mtype="seg"`."""
    anchor: etree._Element
    """Where a new target goes after: the source, or 1.x's seg-source."""


@dataclass
class _Xliff:
    root: etree._Element
    version: int
    units: list[_Unit] = field(default_factory=list)
    segments: list[Segment] = field(default_factory=list)

    def render(self, translated: list[str]) -> bytes:
        if len(translated) != len(self.segments):
            raise ValueError(f"{len(translated)} translations for {len(self.segments)} segments")
        for unit in self.units:
            target = _target(unit, self._tag("target"))
            if unit.sentences:
                body = copy.deepcopy(unit.source)
                sentences = _sentences(body, self._tag("mrk"))
                for sentence, part in zip(sentences, unit.parts, strict=True):
                    _fill(sentence, part.pieces(translated))
                _fill(target, [])
                target.text = body.text
                target.extend(body)
            else:
                (part,) = unit.parts
                _fill(target, part.pieces(translated))
            if self.version == 1:
                target.set("state", "translated")
                target.set("state-qualifier", "leveraged-mt")
            else:
                unit.holder.set("state", "translated")
        return serialize(self.root)

    def render_in(self, translated: list[str], target: str) -> bytes:
        if self.version == 1:
            for f in self.root.iter(self._tag("file")):
                f.set("target-language", target)
        else:
            self.root.set("trgLang", target)
        return self.render(translated)

    def _tag(self, name: str) -> str:
        ns = etree.QName(self.root).namespace
        return f"{{{ns}}}{name}" if ns else name


def _sentences(source: etree._Element, mrk: str) -> list[etree._Element]:
    return [m for m in source.iter(mrk) if m.get("mtype") == "seg"]


def _target(unit: _Unit, tag: str) -> etree._Element:
    """The unit's target, emptied (its attributes kept), or a new one after the source."""
    target = unit.holder.find(tag)
    if target is None:
        target = etree.Element(tag)
        unit.anchor.addnext(target)
        target.tail = unit.anchor.tail
    return target


def _fill(el: etree._Element, pieces: list[Piece]) -> None:
    """`el`'s content replaced by `pieces`."""
    for child in list(el):
        el.remove(child)
    el.text = None
    last: etree._Element | None = None
    for piece in pieces:
        if isinstance(piece, str):
            if last is None:
                el.text = (el.text or "") + piece
            else:
                last.tail = (last.tail or "") + piece
            continue
        if isinstance(piece, Placed):
            assert piece.span.element is not None
            last = etree.SubElement(el, piece.span.element.tag, dict(piece.span.element.attrib))
            _fill(last, piece.pieces)
        else:
            last = copy.deepcopy(piece.element)
            last.tail = None
            el.append(last)


def _as_pieces(items: list[Item]) -> list[Piece]:
    """Items written back as they are (a stretch with nothing to translate)."""
    return [Placed(i, _as_pieces(i.items)) if isinstance(i, Span) else i for i in items]


def _items(el: etree._Element, version: int) -> list[Item]:
    items: list[Item] = []
    add_text(items, el.text)
    for child in el:
        if isinstance(child.tag, str) and _paired(child, version):
            items.append(Span(child, None, _items(child, version)))
        else:  # an inline code, a comment or a processing instruction: kept whole
            items.append(Void(child))
        add_text(items, child.tail)
    return items


def _paired(el: etree._Element, version: int) -> bool:
    if el.get("translate") == "no" or el.get("mtype") == "protected":
        return False
    return etree.QName(el).localname in _PAIRED[version]


def _has_text(el: etree._Element | None) -> bool:
    return el is not None and (bool((el.text or "").strip()) or len(el) > 0)


def _skipped(el: etree._Element) -> bool:
    """`translate="no"` on the element or around it."""
    return el.get("translate") == "no" or any(
        a.get("translate") == "no" for a in el.iterancestors()
    )


def _read(data: bytes, limits: Limits) -> _Xliff:
    root = parse(data, "the XLIFF file")
    name = etree.QName(root)
    if name.localname != "xliff":
        raise BadFile(f"not an XLIFF file: its root element is <{name.localname}>")
    version = 2 if (root.get("version") or "").startswith("2") else 1
    doc = _Xliff(root, version)
    q = doc._tag
    holders = root.iter(q("trans-unit")) if version == 1 else root.iter(q("segment"))
    for holder in holders:
        if _skipped(holder):
            continue
        source = holder.find(q("source"))
        target = holder.find(q("target"))
        state = (target.get("state") if version == 1 and target is not None else None) or (
            holder.get("state") if version == 2 else None
        )
        if source is None or (_has_text(target) and state not in _WANTS[version]):
            continue
        seg_source = holder.find(q("seg-source")) if version == 1 else None
        sentences = _sentences(seg_source, q("mrk")) if seg_source is not None else []
        stretches = sentences or [source]
        parts = [_part(s, version, doc.segments) for s in stretches]
        if len(doc.segments) > limits.max_segments:
            raise BadFile(f"the file holds more than {limits.max_segments} segments")
        container = seg_source if sentences and seg_source is not None else source
        anchor = seg_source if seg_source is not None else source
        doc.units.append(_Unit(holder, container, parts, bool(sentences), anchor))
    return doc


def _part(el: etree._Element, version: int, segments: list[Segment]) -> _Part:
    items = _items(el, version)
    marked = mark(items)
    if not marked.translatable:
        return _Part(items, marked, None)
    segments.append(Segment(marked.text, "xml") if marked.marks else Segment(marked.plain))
    return _Part(items, marked, len(segments) - 1)


FORMAT = FileFormat("xliff", (".xlf", ".xliff"), "application/xliff+xml", _read)
