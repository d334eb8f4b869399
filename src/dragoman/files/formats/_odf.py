"""OpenDocument files: the paragraphs and headings (`text:p`, `text:h`) of content.xml, those
of tables, lists, frames, notes and comments included, and of the master pages' headers,
footers and shapes in styles.xml. A `text:span` or `text:a` is a span; a note, a frame, a
field, a tab or a run of spaces an object kept whole."""

from __future__ import annotations

from lxml import etree

from dragoman.errors import BadFile
from dragoman.files.archive import Archive
from dragoman.files.base import Limits
from dragoman.files.inline import Block
from dragoman.files.mixed import Paragraph
from dragoman.files.package import Package, Part

TEXT = "urn:oasis:names:tc:opendocument:xmlns:text:1.0"
OFFICE = "urn:oasis:names:tc:opendocument:xmlns:office:1.0"
_PARAGRAPHS = {f"{{{TEXT}}}p", f"{{{TEXT}}}h"}
_SPANS = {f"{{{TEXT}}}span", f"{{{TEXT}}}a"}


def _inline(element: etree._Element) -> bool:
    return element.tag in _SPANS


def _paragraphs(scope: etree._Element) -> list[Block]:
    return [Paragraph(e, _inline) for e in scope.iter(*_PARAGRAPHS)]


def _content(root: etree._Element) -> list[Block]:
    return _paragraphs(root)


def _styles(root: etree._Element) -> list[Block]:
    """Only the master pages hold text a reader sees (headers, footers, master shapes)."""
    masters = root.find(f"{{{OFFICE}}}master-styles")
    return _paragraphs(masters) if masters is not None else []


def read(data: bytes, limits: Limits, kind: str, mimetype: str) -> Package:
    archive = Archive(data, limits, kind)
    if archive.has("mimetype"):
        found = archive.read("mimetype").decode("ascii", "replace").strip()
        if found != mimetype:
            raise BadFile(f"not an {kind} file: its mimetype says {found[:100]!r}")
    if not archive.has("content.xml"):
        raise BadFile(f"not an {kind} file: the archive holds no content.xml")
    parts = [Part("content.xml", _content)]
    if archive.has("styles.xml"):
        parts.append(Part("styles.xml", _styles))
    return Package(archive, parts, limits)
