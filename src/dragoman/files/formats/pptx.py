"""PowerPoint presentations (.pptx): the paragraphs (`a:p`) of every slide's shapes, tables and
text boxes, of the speaker notes, and of charts and SmartArt, each a segment of its runs.
Layouts, masters and document properties are copied as they are."""

from __future__ import annotations

import re

from lxml import etree

from dragoman.errors import BadFile
from dragoman.files.archive import Archive
from dragoman.files.base import FileFormat, Limits
from dragoman.files.inline import Block
from dragoman.files.package import Package, Part
from dragoman.files.runs import Dialect, Paragraph

A = "http://schemas.openxmlformats.org/drawingml/2006/main"
DRAWING = Dialect(
    A,
    fixed=frozenset({"pPr", "endParaRPr"}),
    # a link is a run property (`a:hlinkClick`), so a linked run is a span of its own
    not_formatting=frozenset({"lang", "altLang", "dirty", "err", "smtClean", "smtId", "noProof"}),
)
"""DrawingML's text, also in Excel's drawings and charts."""
_MAIN = "ppt/presentation.xml"
_PARTS = re.compile(
    r"ppt/(?:slides/slide|notesSlides/notesSlide|charts/chart|diagrams/data|diagrams/drawing)"
    r"\d+\.xml"
)


def extract(root: etree._Element) -> list[Block]:
    return [Paragraph(p, DRAWING) for p in root.iter(f"{{{A}}}p")]


def _slide_order(name: str) -> tuple[bool, str, int]:
    """Slides first, slide 2 before slide 10."""
    folder, _, rest = name.rpartition("/")
    return folder != "ppt/slides", folder, int(re.sub(r"\D", "", rest) or 0)


def _read(data: bytes, limits: Limits) -> Package:
    archive = Archive(data, limits, "PPTX")
    if not archive.has(_MAIN):
        raise BadFile(f"not a PPTX file: the archive holds no {_MAIN}")
    names = sorted((n for n in archive.names if _PARTS.fullmatch(n)), key=_slide_order)
    return Package(archive, [Part(n, extract) for n in names], limits)


FORMAT = FileFormat(
    "pptx",
    (".pptx",),
    "application/vnd.openxmlformats-officedocument.presentationml.presentation",
    _read,
)
