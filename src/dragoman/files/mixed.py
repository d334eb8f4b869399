"""Paragraphs of mixed content, as OpenDocument and XHTML write them (`text:p` or `<p>` holding
text and inline elements), read as inline items and written back.

An inline element with text (`text:span`, `text:a`, `<em>`, `<a>`) is a `Span` kept around its
translated text; any other child (a note, a frame, a space run, an image, a nested block) is a
`Void` moved back whole, so a paragraph inside it (a note's body, a text box, a list inside a
list item) stays the same element and is translated as a paragraph of its own."""

from __future__ import annotations

from collections.abc import Callable

from lxml import etree

from dragoman.files.inline import Item, Piece, Placed, Span, Void, add_text, text_of


class Paragraph:
    """A paragraph of mixed content; `inline(child)`: whether a child is a span of text."""

    def __init__(self, element: etree._Element, inline: Callable[[etree._Element], bool]) -> None:
        self.element = element
        self.inline = inline
        self.items = self._read(element)

    def _read(self, parent: etree._Element) -> list[Item]:
        items: list[Item] = []
        add_text(items, parent.text)
        for child in parent:
            inner = self._read(child) if self.inline(child) else []
            items.append(Span(child, None, inner) if text_of(inner).strip() else Void(child))
            add_text(items, child.tail)
        return items

    def write(self, pieces: list[Piece]) -> None:
        _fill(self.element, pieces)


def _fill(parent: etree._Element, pieces: list[Piece]) -> None:
    for child in list(parent):
        parent.remove(child)
    parent.text = None
    last: etree._Element | None = None
    for piece in pieces:
        if isinstance(piece, str):
            if last is None:
                parent.text = (parent.text or "") + piece
            else:
                last.tail = (last.tail or "") + piece
            continue
        if isinstance(piece, Placed):
            assert piece.span.element is not None  # a mixed-content span is an element
            child = piece.span.element
            _fill(child, piece.pieces)
        else:
            child = piece.element
        child.tail = None
        parent.append(child)
        last = child
