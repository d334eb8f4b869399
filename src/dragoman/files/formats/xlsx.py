"""Excel workbooks (.xlsx): the shared strings, rich text runs included, the inline strings of
the sheets, the cell comments and the text of drawings and charts, each a segment. Numbers,
formulas, their cached values, sheet names and document properties are copied as they are."""

from __future__ import annotations

import re

from lxml import etree

from dragoman.errors import BadFile
from dragoman.files.archive import Archive
from dragoman.files.base import FileFormat, Limits
from dragoman.files.formats import pptx
from dragoman.files.inline import Block, Piece
from dragoman.files.package import Extract, Package, Part
from dragoman.files.runs import Dialect, Paragraph

S = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
CELLS = Dialect(S, fixed=frozenset({"rPh", "phoneticPr"}), preserve_space=True)
_R, _RPR, _T = (CELLS.tag(n) for n in ("r", "rPr", "t"))
_MAIN = "xl/workbook.xml"
_COMMENTS = re.compile(r"xl/(?:comments/comment|comments)\d+\.xml")
_SHEETS = re.compile(r"xl/worksheets/sheet\d+\.xml")
_DRAWINGS = re.compile(r"xl/(?:drawings/drawing|charts/chart)\d+\.xml")


class _String(Paragraph):
    """A string (`si`, `is`, a comment's `text`): unformatted, it is one `t` again."""

    def write(self, pieces: list[Piece]) -> None:
        super().write(pieces)
        runs = [c for c in self.element if c.tag == _R]
        if any(r.find(_RPR) is not None for r in runs):
            return
        t = etree.SubElement(self.element, _T)
        t.text = "".join(x.text or "" for r in runs for x in r.iter(_T))
        t.set("{http://www.w3.org/XML/1998/namespace}space", "preserve")
        for r in runs:
            self.element.remove(r)
        self.element.insert(0, t)


def _strings(tag: str) -> Extract:
    def extract(root: etree._Element) -> list[Block]:
        return [_String(e, CELLS) for e in root.iter(f"{{{S}}}{tag}")]

    return extract


def _read(data: bytes, limits: Limits) -> Package:
    archive = Archive(data, limits, "XLSX")
    if not archive.has(_MAIN):
        raise BadFile(f"not an XLSX file: the archive holds no {_MAIN}")
    parts = []
    for name in archive.names:
        if name == "xl/sharedStrings.xml":
            parts.append(Part(name, _strings("si")))
        elif _SHEETS.fullmatch(name) and b"inlineStr" in archive.read(name):
            parts.append(Part(name, _strings("is")))
        elif _COMMENTS.fullmatch(name):
            parts.append(Part(name, _strings("text")))
        elif _DRAWINGS.fullmatch(name):
            parts.append(Part(name, pptx.extract))
    return Package(archive, parts, limits)


FORMAT = FileFormat(
    "xlsx",
    (".xlsx",),
    "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    _read,
)
