"""A zip of XML parts taken apart into paragraphs: each part a format names is parsed safely and
its paragraphs found; each paragraph with letters is a segment. Writing back parses the parts
again and finds the same paragraphs the same way, so a render never depends on a tree an
earlier one changed; a part none of whose paragraphs is a segment is copied as it was."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

from lxml import etree

from dragoman.errors import BadFile
from dragoman.files.archive import Archive
from dragoman.files.base import Limits, Segment
from dragoman.files.inline import Block, Marked, mark, place
from dragoman.files.xmlsafe import parse, serialize

Extract = Callable[[etree._Element], list[Block]]
"""A part's paragraphs, all read before any is written (writing one moves elements)."""


@dataclass(frozen=True)
class Part:
    """One XML entry of the archive, and how its paragraphs are found."""

    name: str
    extract: Extract
    doctype: bool = False
    """Whether a document type line without declarations is accepted (XHTML)."""


class Package:
    """The segments of an archive's parts, and the archive back with them translated."""

    def __init__(self, archive: Archive, parts: list[Part], limits: Limits) -> None:
        self._archive = archive
        self._parts = parts
        self._segments: list[Segment] = []
        for part in parts:
            for _, marked in self._paragraphs(part)[1]:
                self._segments.append(Segment(marked.text, "xml"))
                if len(self._segments) > limits.max_segments:
                    raise BadFile(
                        f"the {archive.kind} file holds more than {limits.max_segments} "
                        "segments, the limit"
                    )

    @property
    def segments(self) -> list[Segment]:
        return self._segments

    def _paragraphs(self, part: Part) -> tuple[etree._Element, Iterator[tuple[Block, Marked]]]:
        root = parse(self._archive.read(part.name), part.name, doctype=part.doctype)
        blocks = part.extract(root)
        marked = ((b, mark(b.items)) for b in blocks)
        return root, ((b, m) for b, m in marked if m.translatable)

    def render(self, translated: list[str]) -> bytes:
        if len(translated) != len(self._segments):
            raise ValueError(f"{len(translated)} translations for {len(self._segments)} segments")
        queue = iter(translated)
        replaced: dict[str, bytes] = {}
        for part in self._parts:
            root, paragraphs = self._paragraphs(part)
            written = False
            for block, marked in paragraphs:
                block.write(place(marked, next(queue)))
                written = True
            if written:
                replaced[part.name] = serialize(root)
        return self._archive.write(replaced)
