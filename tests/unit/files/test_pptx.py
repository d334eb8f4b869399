"""PowerPoint presentations: slides python-pptx builds (a title, formatted runs, a link, a
table, a line break, speaker notes) come back with the same slides, shapes, paragraphs and
runs, their text translated and their formatting in place."""

from __future__ import annotations

import io

import pptx
import pytest
from lxml import etree
from pptx.util import Inches

from dragoman.errors import BadFile
from dragoman.files import registry
from dragoman.files.base import Limits
from dragoman.files.formats.pptx import FORMAT
from tests.unit.files.office import (
    drop_markers,
    entries,
    garble,
    has_lower_letters,
    reverse,
    rezip,
    round_trip,
    shout,
)

A = "http://schemas.openxmlformats.org/drawingml/2006/main"


def build() -> bytes:
    deck = pptx.Presentation()
    title = deck.slides.add_slide(deck.slide_layouts[0])
    title.shapes.title.text = "Quarterly results"
    title.placeholders[1].text = "Prepared by the team"
    slide = deck.slides.add_slide(deck.slide_layouts[5])
    slide.shapes.title.text = "Highlights & risks"
    box = slide.shapes.add_textbox(Inches(1), Inches(2), Inches(6), Inches(2)).text_frame
    para = box.paragraphs[0]
    para.add_run().text = "Sales grew "
    bold = para.add_run()
    bold.text = "sharply"
    bold.font.bold = True
    para.add_run().text = " in the north, see "
    link = para.add_run()
    link.text = "the report"
    link.hyperlink.address = "https://example.com/report"
    para.add_run().text = "."
    second = box.add_paragraph()
    second.text = "Costs fell\vslightly"  # \v: a line break inside the paragraph
    italic = second.add_run()
    italic.text = " overall"
    italic.font.italic = True
    box.add_paragraph().text = "42 %"
    table = slide.shapes.add_table(2, 2, Inches(1), Inches(4), Inches(4), Inches(1)).table
    table.cell(0, 0).text = "Region"
    table.cell(0, 1).text = "Growth"
    table.cell(1, 0).text = "North"
    table.cell(1, 1).text = "12"
    slide.notes_slide.notes_text_frame.text = "Mention the northern region first."
    out = io.BytesIO()
    deck.save(out)
    return out.getvalue()


def structure(deck: pptx.presentation.Presentation) -> list[object]:
    shapes = [s for slide in deck.slides for s in slide.shapes]
    frames = [s.text_frame for s in shapes if s.has_text_frame]
    return [
        len(deck.slides),
        [len(slide.shapes) for slide in deck.slides],
        [[len(p.runs) for p in f.paragraphs] for f in frames],
        [(len(s.table.rows), len(s.table.columns)) for s in shapes if s.has_table],
        [slide.has_notes_slide for slide in deck.slides],
    ]


def texts(data: bytes) -> list[str]:
    found = []
    for name, body in entries(data).items():
        if name.startswith(("ppt/slides/slide", "ppt/notesSlides/")) and name.endswith(".xml"):
            root = etree.fromstring(body)
            found += ["".join(p.itertext()) for p in root.iter(f"{{{A}}}p")]
    return [t for t in found if any(c.isalpha() for c in t)]


def test_segments_show_runs_as_markers() -> None:
    segments = [s.text for s in FORMAT.read(build(), Limits()).segments]
    assert segments[:3] == ["Quarterly results", "Prepared by the team", "Highlights &amp; risks"]
    assert "Sales grew <g1>sharply</g1> in the north, see <g2>the report</g2>." in segments
    assert "Costs fell<x1/>slightly<g2> overall</g2>" in segments
    assert {"Region", "Growth", "North", "Mention the northern region first."} <= set(segments)
    assert "42 %" not in segments and "12" not in segments


def test_round_trip_keeps_structure_and_translates_everything() -> None:
    source = build()
    _, out = round_trip(FORMAT, source, shout)
    before, after = pptx.Presentation(io.BytesIO(source)), pptx.Presentation(io.BytesIO(out))
    assert structure(after) == structure(before)
    assert texts(out) and not [t for t in texts(out) if has_lower_letters(t)]
    slide = after.slides[1]
    box = next(s for s in slide.shapes if s.has_text_frame and "SALES" in s.text_frame.text)
    runs = box.text_frame.paragraphs[0].runs
    assert [(r.text, r.font.bold) for r in runs][:3] == [
        ("SALES GREW ", None),
        ("SHARPLY", True),
        (" IN THE NORTH, SEE ", None),
    ]
    assert runs[3].hyperlink.address == "https://example.com/report"
    assert box.text_frame.paragraphs[1].runs[-1].font.italic is True
    assert box.text_frame.paragraphs[2].text == "42 %"
    table = next(s for s in slide.shapes if s.has_table).table
    assert [c.text for c in table.rows[1].cells] == ["NORTH", "12"]
    notes = slide.notes_slide.notes_text_frame.text
    assert notes == "MENTION THE NORTHERN REGION FIRST."
    for name in ("ppt/slideLayouts/slideLayout1.xml", "docProps/core.xml"):
        assert entries(out)[name] == entries(source)[name]


def test_end_of_paragraph_properties_stay_last() -> None:
    _, out = round_trip(FORMAT, build(), reverse)
    root = etree.fromstring(entries(out)["ppt/slides/slide2.xml"])
    for p in root.iter(f"{{{A}}}p"):
        names = [etree.QName(c).localname for c in p]
        assert "endParaRPr" not in names[:-1] and "pPr" not in names[1:]


def test_reordered_markers_move_the_runs() -> None:
    _, out = round_trip(FORMAT, build(), reverse)
    slide = pptx.Presentation(io.BytesIO(out)).slides[1]
    box = next(s for s in slide.shapes if s.has_text_frame and "SALES" in s.text_frame.text)
    runs = box.text_frame.paragraphs[0].runs
    assert [(r.text, r.font.bold, r.hyperlink.address) for r in runs] == [
        (".", None, None),
        ("THE REPORT", None, "https://example.com/report"),
        (" IN THE NORTH, SEE ", None, None),
        ("SHARPLY", True, None),
        ("SALES GREW ", None, None),
    ]


@pytest.mark.parametrize("translate", [drop_markers, garble])
def test_lost_or_garbled_markers_keep_every_object(translate: object) -> None:
    assert callable(translate)
    source = build()
    _, out = round_trip(FORMAT, source, translate)
    before, after = pptx.Presentation(io.BytesIO(source)), pptx.Presentation(io.BytesIO(out))
    assert structure(after)[:2] == structure(before)[:2]
    breaks = [
        len(etree.fromstring(entries(d)["ppt/slides/slide2.xml"]).findall(f".//{{{A}}}br"))
        for d in (source, out)
    ]
    assert breaks[0] == breaks[1] == 1
    assert not [t for t in texts(out) if has_lower_letters(t)]


def test_not_a_pptx_refused() -> None:
    with pytest.raises(BadFile, match="not a readable PPTX file"):
        registry.read("deck.pptx", b"\x00" * 100)
    no_main = rezip(build(), {"ppt/presentation.xml": None})
    with pytest.raises(BadFile, match=r"the archive holds no ppt/presentation\.xml"):
        registry.read("deck.pptx", no_main)
