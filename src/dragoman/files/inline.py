"""A paragraph's inline content as one segment, and its translation back as content.

A paragraph reads as items: text; a `Span`, text with its own formatting or link, which the
segment shows as `<gN>…</gN>`; a `Void`, an object kept whole (a field, an image, a tab, a
note reference, a bookmark), shown as `<xN/>`. Markers are numbered in document order; the text
is XML-escaped. A translation comes back as pieces in the order it gives them: text, Voids, and
`Placed` spans holding their own pieces. A marker the translation lost is put back where the
service's repair guesses; one it repeats or invents is dropped and its text kept in the
surrounding formatting; an object is never lost (one still missing ends the paragraph)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Protocol

from lxml import etree

from dragoman.text.letters import has_letters
from dragoman.text.markup import markers


@dataclass(eq=False)
class Void:
    """An object kept whole: the element put back where its marker stands."""

    element: etree._Element
    run: etree._Element | None = None
    """A run-based format's run the object sat in: its properties are kept around it."""


@dataclass(eq=False)
class Span:
    """Text kept apart: in `element` (a link, a span), or, when that is None, written in runs
    with `run`'s properties (a bold or italic stretch)."""

    element: etree._Element | None
    run: etree._Element | None
    items: list[Item] = field(default_factory=list)


Item = str | Span | Void


@dataclass(eq=False)
class Placed:
    """A span as the translation gives it."""

    span: Span
    pieces: list[Piece]


Piece = str | Void | Placed


class Block(Protocol):
    """A paragraph of some format: its items, and how a translation is written into it."""

    @property
    def items(self) -> list[Item]: ...

    def write(self, pieces: list[Piece]) -> None: ...


@dataclass
class Marked:
    """A paragraph's segment text and what each of its markers stands for."""

    text: str
    marks: dict[str, Span | Void]
    plain: str
    """The paragraph's text without markers (is there anything to translate)."""

    @property
    def translatable(self) -> bool:
        return has_letters(self.plain)


def mark(items: list[Item]) -> Marked:
    marks: dict[str, Span | Void] = {}
    plain: list[str] = []

    def walk(items: list[Item]) -> str:
        out: list[str] = []
        for item in items:
            if isinstance(item, str):
                plain.append(item)
                out.append(escape(item))
                continue
            name = f"{'x' if isinstance(item, Void) else 'g'}{len(marks) + 1}"
            marks[name] = item
            if isinstance(item, Void):
                out.append(f"<{name}/>")
            else:
                out.append(f"<{name}>{walk(item.items)}</{name}>")
        return "".join(out)

    text = walk(items)
    return Marked(text, marks, "".join(plain))


def place(marked: Marked, translated: str) -> list[Piece]:
    """The translation of `marked` as pieces, every object in it once."""
    content, _ = markers.to_content(marked.text, translated, marked.marks.keys())
    used: set[str] = set()

    def walk(nodes: markers.Content) -> list[Piece]:
        out: list[Piece] = []
        for node in nodes:
            if isinstance(node, str):
                _extend(out, [unescape(node)])
                continue
            item = marked.marks.get(node.name)
            if item is None or node.name in used:  # invented or repeated: keep its text only
                _extend(out, walk(node.content))
                continue
            used.add(node.name)
            out.append(item if isinstance(item, Void) else Placed(item, walk(node.content)))
        return out

    pieces = walk(content)
    lost = [i for n, i in marked.marks.items() if n not in used and isinstance(i, Void)]
    return pieces + lost


def _extend(pieces: list[Piece], more: list[Piece]) -> None:
    """Append pieces, text joined to the text before it, empty text left out."""
    for piece in more:
        if piece == "":
            continue
        if isinstance(piece, str) and pieces and isinstance(pieces[-1], str):
            pieces[-1] += piece
        else:
            pieces.append(piece)


def text_of(items: list[Item]) -> str:
    """The text of items, spans included, objects not."""
    return "".join(
        i if isinstance(i, str) else text_of(i.items) for i in items if not isinstance(i, Void)
    )


def add_text(items: list[Item], text: str | None) -> None:
    """Append text, joined to the text before it."""
    if not text:
        return
    if items and isinstance(items[-1], str):
        items[-1] += text
    else:
        items.append(text)


def escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


_REFERENCE = re.compile(r"&(?:(amp|lt|gt|quot|apos)|#([0-9]{1,7})|#[xX]([0-9a-fA-F]{1,6}));")
_NAMED = {"amp": "&", "lt": "<", "gt": ">", "quot": '"', "apos": "'"}
# Characters XML cannot hold (a control character a model wrote, or `&#0;`).
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _reference(m: re.Match[str]) -> str:
    if m.group(1):
        return _NAMED[m.group(1)]
    code = int(m.group(2)) if m.group(2) else int(m.group(3), 16)
    return chr(code) if code <= 0x10FFFF else ""


def unescape(text: str) -> str:
    """Escaped segment text back to text an XML element can hold."""
    if "&" in text:
        text = _REFERENCE.sub(_reference, text)
    return _NOT_XML.sub("", text)
