"""OpenDocument text: a document odfpy builds (a heading, a styled span, a link, a tab, a line
break, a table, a footnote, a header and footer) comes back with the same elements, their text
translated, each span keeping its style and each object its place."""

from __future__ import annotations

import io

import pytest
from lxml import etree
from odf import teletype
from odf.opendocument import OpenDocumentText, load
from odf.style import Footer, Header, MasterPage, PageLayout, Style, TextProperties
from odf.table import Table, TableCell, TableColumn, TableRow
from odf.text import A, H, LineBreak, Note, NoteBody, NoteCitation, P, S, Span, Tab

from dragoman.errors import BadFile
from dragoman.files import registry
from dragoman.files.base import Limits
from dragoman.files.formats._odf import TEXT
from dragoman.files.formats.odt import FORMAT
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

COUNTED = (P, H, Span, A, Tab, LineBreak, S, Note, TableCell)


def build() -> bytes:
    doc = OpenDocumentText()
    bold = Style(name="Strong", family="text")
    bold.addElement(TextProperties(fontweight="bold"))
    doc.automaticstyles.addElement(bold)
    layout = PageLayout(name="pm1")
    doc.automaticstyles.addElement(layout)
    master = MasterPage(name="Standard", pagelayoutname=layout)
    header, footer = Header(), Footer()
    header.addElement(P(text="Header line"))
    footer.addElement(P(text="Footer line"))
    master.addElement(header)
    master.addElement(footer)
    doc.masterstyles.addElement(master)

    doc.text.addElement(H(outlinelevel=1, text="Annual report & outlook"))
    p = P(text="Plain start ")
    p.addElement(Span(stylename=bold, text="bold part"))
    p.addText(" then ")
    p.addElement(A(href="https://example.com/", type="simple", text="a link"))
    p.addText(" end.")
    doc.text.addElement(p)
    q = P(text="Before the tab")
    q.addElement(Tab())
    q.addText("after it")
    q.addElement(LineBreak())
    q.addText("new line")
    q.addElement(S(c=3))
    q.addText("spaced")
    note = Note(id="ftn1", noteclass="footnote")
    note.addElement(NoteCitation(text="1"))
    body = NoteBody()
    body.addElement(P(text="A footnote says so."))
    note.addElement(body)
    q.addElement(note)
    doc.text.addElement(q)
    table = Table(name="Figures")
    table.addElement(TableColumn(numbercolumnsrepeated=2))
    for row in (("Region", "Growth"), ("North", "12")):
        tr = TableRow()
        for value in row:
            cell = TableCell()
            cell.addElement(P(text=value))
            tr.addElement(cell)
        table.addElement(tr)
    doc.text.addElement(table)
    doc.text.addElement(P(text="2024"))
    out = io.BytesIO()
    doc.save(out)
    return out.getvalue()


def counts(data: bytes) -> list[int]:
    doc = load(io.BytesIO(data))
    return [len(doc.getElementsByType(kind)) for kind in COUNTED]


def texts(data: bytes) -> list[str]:
    found = []
    for name in ("content.xml", "styles.xml"):
        root = etree.fromstring(entries(data)[name])
        found += ["".join(p.itertext()) for p in root.iter(f"{{{TEXT}}}p", f"{{{TEXT}}}h")]
    return [t for t in found if any(c.isalpha() for c in t)]


def test_segments_show_spans_and_objects_as_markers() -> None:
    segments = [s.text for s in FORMAT.read(build(), Limits()).segments]
    assert segments[:2] == [
        "Annual report &amp; outlook",
        "Plain start <g1>bold part</g1> then <g2>a link</g2> end.",
    ]
    assert "Before the tab<x1/>after it<x2/>new line<x3/>spaced<x4/>" in segments
    assert {"A footnote says so.", "Region", "North", "Header line", "Footer line"} <= set(segments)
    assert "2024" not in segments and "12" not in segments


def test_round_trip_keeps_structure_and_translates_everything() -> None:
    source = build()
    _, out = round_trip(FORMAT, source, shout)
    assert counts(out) == counts(source)
    assert texts(out) and not [t for t in texts(out) if has_lower_letters(t)]
    doc = load(io.BytesIO(out))
    span = doc.getElementsByType(Span)[0]
    assert teletype.extractText(span) == "BOLD PART"
    assert span.getAttribute("stylename") == "Strong"
    link = doc.getElementsByType(A)[0]
    assert link.getAttribute("href") == "https://example.com/"
    assert teletype.extractText(link) == "A LINK"
    assert entries(out)["meta.xml"] == entries(source)["meta.xml"]
    assert out[30:38] == b"mimetype"  # first and stored, as ODF readers look for it


def test_reordered_markers_move_the_spans() -> None:
    _, out = round_trip(FORMAT, build(), reverse)
    doc = load(io.BytesIO(out))
    p = doc.getElementsByType(P)[0]
    assert teletype.extractText(p) == " END.A LINK THEN BOLD PARTPLAIN START "
    names = [n.qname[1] for n in p.childNodes if n.nodeType == n.ELEMENT_NODE]
    assert names == ["a", "span"]


@pytest.mark.parametrize("translate", [drop_markers, garble])
def test_lost_or_garbled_markers_keep_every_object(translate: object) -> None:
    assert callable(translate)
    source = build()
    _, out = round_trip(FORMAT, source, translate)
    objects = slice(COUNTED.index(Tab), None)
    assert counts(out)[objects] == counts(source)[objects]
    assert not [t for t in texts(out) if has_lower_letters(t)]


def test_wrong_or_missing_content_refused() -> None:
    with pytest.raises(BadFile, match="not an ODT file: its mimetype says 'application/vnd"):
        registry.read("a.odt", rezip(build(), {"mimetype": b"application/vnd.ms-excel"}))
    with pytest.raises(BadFile, match=r"the archive holds no content\.xml"):
        registry.read("a.odt", rezip(build(), {"content.xml": None}))
    with pytest.raises(BadFile, match="not a readable ODT file"):
        registry.read("a.odt", b"<office:document/>")
