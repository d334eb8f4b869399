"""Excel workbooks: strings openpyxl writes (plain, rich text with a bold run, a comment), some
moved to the shared strings table as Excel keeps them, come back translated in the same cells
with numbers, formulas and sheet names untouched and the bold run still bold."""

from __future__ import annotations

import io

import openpyxl
import pytest
from lxml import etree
from openpyxl.cell.rich_text import CellRichText, TextBlock
from openpyxl.cell.text import InlineFont
from openpyxl.comments import Comment

from dragoman.errors import BadFile
from dragoman.files import registry
from dragoman.files.base import Limits
from dragoman.files.formats.xlsx import FORMAT, S
from tests.unit.files.office import drop_markers, entries, reverse, rezip, round_trip, shout

SHEET = "xl/worksheets/sheet1.xml"
SHARED_TYPE = "application/vnd.openxmlformats-officedocument.spreadsheetml.sharedStrings+xml"


def share(data: bytes, keep_inline: set[str]) -> bytes:
    """The workbook with its inline strings moved to a shared strings table (but those of the
    cells `keep_inline`), as Excel writes them."""
    parts = entries(data)
    sheet = etree.fromstring(parts[SHEET])
    table = etree.Element(f"{{{S}}}sst", nsmap={None: S})
    for cell in sheet.iter(f"{{{S}}}c"):
        if cell.get("t") != "inlineStr" or cell.get("r") in keep_inline:
            continue
        inline = cell.find(f"{{{S}}}is")
        inline.tag = f"{{{S}}}si"
        cell.set("t", "s")
        etree.SubElement(cell, f"{{{S}}}v").text = str(len(table))
        table.append(inline)
    override = f'<Override PartName="/xl/sharedStrings.xml" ContentType="{SHARED_TYPE}"/>'
    types = parts["[Content_Types].xml"].replace(b"</Types>", override.encode() + b"</Types>")
    return rezip(
        data,
        {
            SHEET: etree.tostring(sheet),
            "xl/sharedStrings.xml": etree.tostring(table),
            "[Content_Types].xml": types,
        },
    )


def build() -> bytes:
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "Budget"
    ws["A1"] = "Revenue"
    ws["B1"] = 1200
    ws["C1"] = "=B1*2"
    ws["A2"] = CellRichText("Net ", TextBlock(InlineFont(b=True), "profit"), " margin")
    ws["B2"] = "2024"
    ws["A3"] = "Kept inline"
    ws["A3"].comment = Comment("Check this number", "Ann")
    other = wb.create_sheet("Notes")
    other["A1"] = "Second sheet text"
    out = io.BytesIO()
    wb.save(out)
    return share(out.getvalue(), keep_inline={"A3"})


def cells(data: bytes) -> dict[tuple[str, str], object]:
    wb = openpyxl.load_workbook(io.BytesIO(data), rich_text=True)
    return {(ws.title, c.coordinate): c.value for ws in wb for row in ws.iter_rows() for c in row}


def test_segments_are_strings_and_runs() -> None:
    segments = [s.text for s in FORMAT.read(build(), Limits()).segments]
    assert "Net <g1>profit</g1> margin" in segments
    assert {"Revenue", "Kept inline", "Check this number", "Second sheet text"} <= set(segments)
    assert "2024" not in segments and not [s for s in segments if "B1" in s]


def test_round_trip_translates_strings_and_keeps_the_rest() -> None:
    source = build()
    assert b"<si>" in entries(source)["xl/sharedStrings.xml"]
    _, out = round_trip(FORMAT, source, shout)
    before, after = cells(source), cells(out)
    assert before.keys() == after.keys()
    assert after["Budget", "A1"] == "REVENUE"
    assert after["Budget", "B1"] == 1200 and after["Budget", "C1"] == "=B1*2"
    assert after["Budget", "B2"] == "2024"
    assert after["Budget", "A3"] == "KEPT INLINE"
    assert after["Notes", "A1"] == "SECOND SHEET TEXT"
    rich = after["Budget", "A2"]
    assert isinstance(rich, CellRichText) and str(rich) == "NET PROFIT MARGIN"
    bold = [b for b in rich if isinstance(b, TextBlock)]
    assert [(b.text, b.font.b) for b in bold] == [("PROFIT", True)]
    wb = openpyxl.load_workbook(io.BytesIO(out))
    assert wb.sheetnames == ["Budget", "Notes"]
    assert wb["Budget"]["A3"].comment.text == "CHECK THIS NUMBER"
    shared = entries(out)["xl/sharedStrings.xml"]
    assert b'<si><t xml:space="preserve">REVENUE</t></si>' in shared  # plain stays plain


def test_reordered_runs_keep_their_formatting() -> None:
    _, out = round_trip(FORMAT, build(), reverse)
    rich = cells(out)["Budget", "A2"]
    assert isinstance(rich, CellRichText)
    assert [(b.text, b.font.b) if isinstance(b, TextBlock) else b for b in rich] == [
        " MARGIN",
        ("PROFIT", True),
        "NET ",
    ]


def test_lost_markers_keep_the_text() -> None:
    _, out = round_trip(FORMAT, build(), drop_markers)
    assert str(cells(out)["Budget", "A2"]) == "NET PROFIT MARGIN"


def test_not_an_xlsx_refused() -> None:
    with pytest.raises(BadFile, match="not a readable XLSX file"):
        registry.read("book.xlsx", b"PK\x03\x04 but nothing after")
    with pytest.raises(BadFile, match=r"holds no xl/workbook\.xml"):
        registry.read("book.xlsx", rezip(build(), {"xl/workbook.xml": None}))
