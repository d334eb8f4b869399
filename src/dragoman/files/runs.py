"""Paragraphs of runs, as Word, PowerPoint and Excel write them (`w:p`/`a:p`/`si` holding runs
`r`, each its properties `rPr` and its text `t`), read as inline items and written back.

Runs of the same formatting read as one stretch of text; the formatting that holds most of a
paragraph's text is its plain text, and a stretch in any other reads as a `Span` written back
with that formatting. Anything else in a run (a tab, a break, a drawing, a field character, a
note reference) is a `Void` written back in a run of its own properties; anything else in the
paragraph (a bookmark, a comment anchor, a field) a `Void` kept as it is. A wrapper whose runs
stay inside it (Word's hyperlink, simple field, inserted text) is a `Span` of its own."""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass

from lxml import etree

from dragoman.files.inline import Item, Piece, Span, Void, add_text, text_of

_XML_SPACE = "{http://www.w3.org/XML/1998/namespace}space"


@dataclass(frozen=True)
class Dialect:
    """One format's names: the namespace of `p`/`r`/`rPr`/`t`, and the local names of the
    paragraph's other children."""

    ns: str
    wrappers: frozenset[str] = frozenset()
    """Elements whose runs stay inside them, each a span."""
    fixed: frozenset[str] = frozenset()
    """The paragraph's own properties, kept where they are (`pPr`, `endParaRPr`)."""
    dropped: frozenset[str] = frozenset()
    """Marks a program recomputes, not worth a marker (`proofErr`)."""
    not_formatting: frozenset[str] = frozenset()
    """Attributes and children of `rPr` that do not tell runs apart (`lang`, `dirty`)."""
    preserve_space: bool = False
    """Whether `t` says `xml:space="preserve"` (Word and Excel; PowerPoint's has no such)."""

    def tag(self, local: str) -> str:
        return f"{{{self.ns}}}{local}"


@dataclass(eq=False)
class _Text:
    text: str
    run: etree._Element | None
    key: bytes


def _local(element: etree._Element) -> str:
    return etree.QName(element).localname if isinstance(element.tag, str) else ""


class Paragraph:
    """A paragraph of runs (see the module's docstring)."""

    def __init__(self, element: etree._Element, dialect: Dialect) -> None:
        self.element = element
        self.dialect = dialect
        self._r, self._rpr, self._t = (dialect.tag(n) for n in ("r", "rPr", "t"))
        self.items, self.run = self._read(element)

    def _fixed(self, child: etree._Element) -> bool:
        return _local(child) in self.dialect.fixed

    def _read(self, parent: etree._Element) -> tuple[list[Item], etree._Element | None]:
        """The items of a paragraph or wrapper, and the run its plain text is written with."""
        found: list[_Text | Span | Void] = []
        for child in parent:
            local = _local(child)
            if local in self.dialect.fixed or local in self.dialect.dropped:
                continue
            if child.tag == self._r:
                found.extend(self._run(child))
            elif child.tag == self._t:  # Excel's unformatted string: a `t` with no run
                found.append(_Text(child.text or "", None, b""))
            elif local in self.dialect.wrappers:
                items, run = self._read(child)
                found.append(Span(child, run, items) if text_of(items).strip() else Void(child))
            else:
                found.append(Void(child))
        return _group(found)

    def _run(self, run: etree._Element) -> list[_Text | Void]:
        key = self._key(run.find(self._rpr))
        out: list[_Text | Void] = []
        for child in run:
            if child.tag == self._rpr or _local(child) in self.dialect.dropped:
                continue
            is_text = child.tag == self._t
            out.append(_Text(child.text or "", run, key) if is_text else Void(child, run))
        return out

    def _key(self, rpr: etree._Element | None) -> bytes:
        """What tells a run's formatting apart from another's."""
        if rpr is None:
            return b""
        ignored = self.dialect.not_formatting
        if ignored:
            rpr = copy.deepcopy(rpr)
            for name in [a for a in rpr.attrib if etree.QName(a).localname in ignored]:
                del rpr.attrib[name]
            for child in [c for c in rpr if _local(c) in ignored]:
                rpr.remove(child)
        return etree.tostring(rpr, with_tail=False)

    def write(self, pieces: list[Piece]) -> None:
        _replace(self.element, self._emit(pieces, self.run), self._fixed)

    def _emit(self, pieces: list[Piece], run: etree._Element | None) -> list[etree._Element]:
        out: list[etree._Element] = []
        for piece in pieces:
            if isinstance(piece, str):
                if piece:
                    out.append(self._new_run(run, self._text(piece)))
            elif isinstance(piece, Void):
                element = piece.element
                out.append(element if piece.run is None else self._new_run(piece.run, element))
            elif piece.span.element is None:
                out.extend(self._emit(piece.pieces, piece.span.run))
            else:
                wrapper = piece.span.element
                _replace(wrapper, self._emit(piece.pieces, piece.span.run), self._fixed)
                out.append(wrapper)
        return out

    def _text(self, text: str) -> etree._Element:
        t = etree.Element(self._t)
        t.text = text
        if self.dialect.preserve_space:
            t.set(_XML_SPACE, "preserve")
        return t

    def _new_run(self, like: etree._Element | None, child: etree._Element) -> etree._Element:
        """A run with the attributes and properties of `like`, holding `child`."""
        run = etree.Element(self._r, dict(like.attrib) if like is not None else {})
        rpr = like.find(self._rpr) if like is not None else None
        if rpr is not None:
            run.append(copy.deepcopy(rpr))
        run.append(child)
        return run


def _group(found: list[_Text | Span | Void]) -> tuple[list[Item], etree._Element | None]:
    """Runs of one formatting joined; the formatting holding most text plain, each other a
    span. An object between two stretches of one formatting stays inside its span."""
    weight: dict[bytes, int] = {}
    runs: dict[bytes, etree._Element | None] = {}
    for f in found:
        if isinstance(f, _Text):
            weight[f.key] = weight.get(f.key, 0) + len(f.text)
            runs.setdefault(f.key, f.run)
    plain = max(weight, key=weight.__getitem__) if weight else b""
    items: list[Item] = []
    span: Span | None = None
    key = plain
    pending: list[Item] = []  # objects after an open span: inside it if its formatting goes on
    for f in found:
        if isinstance(f, _Text) and not f.text:
            continue
        if not isinstance(f, _Text):
            (pending if span else items).append(f)
            continue
        if span is not None and f.key == key:
            span.items.extend(pending)
            add_text(span.items, f.text)
        else:
            items.extend(pending)
            span = None
            if f.key == plain:
                add_text(items, f.text)
            else:
                span, key = Span(None, f.run, [f.text] if f.text else []), f.key
                items.append(span)
        pending = []
    items.extend(pending)
    return items, runs.get(plain)


def _replace(
    parent: etree._Element,
    children: list[etree._Element],
    fixed: Callable[[etree._Element], bool],
) -> None:
    """`parent`'s content children replaced by `children`, its fixed ones kept in place."""
    old = list(parent)
    at = next((i for i, c in enumerate(old) if not fixed(c)), len(old))
    for child in old:
        if not fixed(child):
            parent.remove(child)
    for offset, child in enumerate(children):
        parent.insert(at + offset, child)
