"""Word documents (.docx): the paragraphs of the body, headers, footers, footnotes, endnotes and
comments, those in tables and text boxes included, each a segment of its runs. Document
properties, styles and everything else are copied as they are."""

from __future__ import annotations

import re

from lxml import etree

from dragoman.errors import BadFile
from dragoman.files.archive import Archive
from dragoman.files.base import FileFormat, Limits
from dragoman.files.inline import Block
from dragoman.files.package import Package, Part
from dragoman.files.runs import Dialect, Paragraph

W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
DIALECT = Dialect(
    W,
    wrappers=frozenset({"hyperlink", "fldSimple", "smartTag", "customXml", "ins", "moveTo"}),
    fixed=frozenset({"pPr"}),
    dropped=frozenset({"proofErr", "lastRenderedPageBreak"}),
    not_formatting=frozenset({"lang", "noProof"}),
    preserve_space=True,
)
_MAIN = "word/document.xml"
_PARTS = re.compile(r"word/(?:document|header\d*|footer\d*|footnotes|endnotes|comments)\.xml")


def _extract(root: etree._Element) -> list[Block]:
    return [Paragraph(p, DIALECT) for p in root.iter(f"{{{W}}}p")]


def _read(data: bytes, limits: Limits) -> Package:
    archive = Archive(data, limits, "DOCX")
    if not archive.has(_MAIN):
        raise BadFile(f"not a DOCX file: the archive holds no {_MAIN}")
    names = [_MAIN] + [n for n in archive.names if n != _MAIN and _PARTS.fullmatch(n)]
    return Package(archive, [Part(n, _extract) for n in names], limits)


FORMAT = FileFormat(
    "docx",
    (".docx",),
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    _read,
)
