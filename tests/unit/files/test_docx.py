"""Word documents: a document python-docx builds (formatted runs, a hyperlink, a tab, a picture,
a table, a header and footer, a comment, a text box, footnotes) comes back with the same
structure, its text translated and its formatting and objects in place."""

from __future__ import annotations

import io
import struct
import zlib

import docx
import pytest
from docx.oxml import OxmlElement, parse_xml
from docx.oxml.ns import nsdecls, qn
from lxml import etree

from dragoman.errors import BadFile
from dragoman.files import registry
from dragoman.files.formats.docx import FORMAT
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

W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
FOOTNOTES = f"""<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<w:footnotes xmlns:w="{W}"><w:footnote w:id="1"><w:p><w:r><w:footnoteRef/></w:r>
<w:r><w:t xml:space="preserve"> A footnote says so.</w:t></w:r></w:p></w:footnote></w:footnotes>"""
TEXT_BOX = (
    f'<w:r {nsdecls("w")} xmlns:v="urn:schemas-microsoft-com:vml"><w:pict>'
    "<v:shape><v:textbox><w:txbxContent><w:p><w:r>"
    "<w:t>Inside the box</w:t></w:r></w:p></w:txbxContent></v:textbox></v:shape></w:pict></w:r>"
)


def png() -> bytes:
    def chunk(kind: bytes, body: bytes) -> bytes:
        return (
            struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))
        )

    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(b"\x00\xff\x00\x00"))
        + chunk(b"IEND", b"")
    )


def build() -> bytes:
    d = docx.Document()
    d.add_heading("Annual report & outlook", 1)
    p = d.add_paragraph("Plain start ")
    p.add_run("bold part").bold = True
    p.add_run(" then ")
    p.add_run("italic").italic = True
    p.add_run(" end.")
    link = d.add_paragraph("See ")
    h = OxmlElement("w:hyperlink")
    h.set(qn("r:id"), "rId99")
    h.append(
        parse_xml(
            f'<w:r {nsdecls("w")}><w:rPr><w:rStyle w:val="Hyperlink"/></w:rPr>'
            "<w:t>the site</w:t></w:r>"
        )
    )
    link._p.append(h)
    link.add_run(" for details.")
    link.add_run().add_tab()
    link.add_run("After the tab")
    pic = d.add_paragraph("A picture: ")
    pic.add_run().add_picture(io.BytesIO(png()))
    pic.add_run(" and its caption")
    table = d.add_table(rows=2, cols=2)
    table.cell(0, 0).text = "First cell"
    table.cell(0, 1).text = "Second cell"
    table.cell(1, 1).text = "42"
    commented = d.add_paragraph("A remark on ")
    run = commented.add_run("this")
    commented.add_run(".")
    d.add_comment(run, text="Check this figure", author="Ann")
    boxed = d.add_paragraph("A box follows ")
    boxed._p.append(parse_xml(TEXT_BOX))
    d.add_paragraph("2024")
    d.sections[0].header.paragraphs[0].text = "Header line"
    d.sections[0].footer.paragraphs[0].text = "Footer line"
    out = io.BytesIO()
    d.save(out)
    return rezip(out.getvalue(), {"word/footnotes.xml": FOOTNOTES.encode()})


def structure(d: docx.document.Document) -> list[object]:
    body = d.element.body
    return [
        len(d.paragraphs),
        [len(p.runs) for p in d.paragraphs],
        len(d.tables),
        [len(r.cells) for t in d.tables for r in t.rows],
        len(d.inline_shapes),
        len(body.findall(f".//{{{W}}}hyperlink")),
        len(body.findall(f".//{{{W}}}tab")),
        len(body.findall(f".//{{{W}}}txbxContent//{{{W}}}p")),
        [len(body.findall(f".//{{{W}}}{n}")) for n in ("commentRangeStart", "commentReference")],
    ]


def all_text(data: bytes) -> list[str]:
    """The text of every lettered paragraph of every part the format translates."""
    texts = []
    for name, body in entries(data).items():
        if name.startswith("word/") and name.endswith(".xml") and b"<w:p" in body:
            root = etree.fromstring(body)
            texts += ["".join(p.itertext()) for p in root.iter(f"{{{W}}}p")]
    return [t for t in texts if any(c.isalpha() for c in t)]


def test_segments_show_runs_as_markers() -> None:
    parsed = FORMAT.read(build(), registry.Limits())
    texts = [s.text for s in parsed.segments]
    assert "Annual report &amp; outlook" in texts
    assert "Plain start <g1>bold part</g1> then <g2>italic</g2> end." in texts
    assert "See <g1>the site</g1> for details.<x2/>After the tab" in texts
    assert "A picture: <x1/> and its caption" in texts
    assert "2024" not in texts and "42" not in texts
    assert {"Inside the box", "Header line", "Footer line"} <= set(texts)
    assert "A remark on <x1/>this<x2/><x3/>." in texts  # the comment's anchors and reference
    assert "<x1/>Check this figure" in texts
    assert "<x1/> A footnote says so." in texts
    assert all(s.markup == "xml" for s in parsed.segments)


def test_round_trip_keeps_structure_and_translates_everything() -> None:
    source = build()
    _, out = round_trip(FORMAT, source, shout)
    before, after = docx.Document(io.BytesIO(source)), docx.Document(io.BytesIO(out))
    assert structure(after) == structure(before)
    texts = all_text(out)
    assert texts and not [t for t in texts if has_lower_letters(t)]
    assert "PLAIN START BOLD PART THEN ITALIC END." in texts
    runs = after.paragraphs[1].runs
    assert [(r.text, r.bold, r.italic) for r in runs][1:4] == [
        ("BOLD PART", True, None),
        (" THEN ", None, None),
        ("ITALIC", None, True),
    ]
    assert after.tables[0].cell(0, 0).text == "FIRST CELL"
    assert after.tables[0].cell(1, 1).text == "42"
    assert after.sections[0].header.paragraphs[0].text == "HEADER LINE"
    assert [c.text for c in after.comments] == ["CHECK THIS FIGURE"]
    untouched = ("docProps/core.xml", "word/styles.xml", "word/media/image1.png")
    assert {n: entries(out)[n] for n in untouched} == {n: entries(source)[n] for n in untouched}


def test_reordered_markers_move_the_runs() -> None:
    source = build()
    _, out = round_trip(FORMAT, source, reverse)
    after = docx.Document(io.BytesIO(out))
    assert structure(after) == structure(docx.Document(io.BytesIO(source)))
    runs = after.paragraphs[1].runs
    assert [(r.text, r.bold, r.italic) for r in runs] == [
        (" END.", None, None),
        ("ITALIC", None, True),
        (" THEN ", None, None),
        ("BOLD PART", True, None),
        ("PLAIN START ", None, None),
    ]
    link = after.paragraphs[2]._p
    assert link[0].tag == qn("w:r") and link[0][0].tag == qn("w:t")  # the text after the tab
    assert link[1].find(qn("w:tab")) is not None


@pytest.mark.parametrize("translate", [drop_markers, garble])
def test_lost_or_garbled_markers_keep_every_object(translate: object) -> None:
    source = build()
    assert callable(translate)
    _, out = round_trip(FORMAT, source, translate)
    before, after = docx.Document(io.BytesIO(source)), docx.Document(io.BytesIO(out))
    assert structure(after)[2:] == structure(before)[2:]
    assert not [t for t in all_text(out) if has_lower_letters(t)]


def test_hyperlink_keeps_its_target_and_style() -> None:
    _, out = round_trip(FORMAT, build())
    link = docx.Document(io.BytesIO(out)).element.body.find(f".//{{{W}}}hyperlink")
    assert link is not None and link.get(qn("r:id")) == "rId99"
    assert link.find(f"{{{W}}}r/{{{W}}}rPr/{{{W}}}rStyle").get(qn("w:val")) == "Hyperlink"
    assert "".join(t.text for t in link.iter(qn("w:t"))) == "THE SITE"


def test_not_a_docx_refused() -> None:
    with pytest.raises(BadFile, match="not a readable DOCX file"):
        registry.read("report.docx", b"%PDF-1.4 not a zip at all")
    with pytest.raises(BadFile, match="is empty"):
        registry.read("report.docx", b"")
    odd = rezip(build(), {"word/document.xml": None})
    with pytest.raises(BadFile, match=r"not a DOCX file: the archive holds no word/document\.xml"):
        registry.read("report.docx", odd)


@pytest.mark.parametrize(
    "xml",
    [
        b'<!DOCTYPE d [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;">]>'
        b'<w:document xmlns:w="' + W.encode() + b'"><w:body><w:p><w:r><w:t>&b;</w:t>'
        b"</w:r></w:p></w:body></w:document>",
        b'<!DOCTYPE d [<!ENTITY x SYSTEM "file:///etc/passwd">]>'
        b'<w:document xmlns:w="' + W.encode() + b'"><w:body><w:p><w:r><w:t>&x;</w:t>'
        b"</w:r></w:p></w:body></w:document>",
    ],
)
def test_entity_declarations_in_a_docx_refused(xml: bytes) -> None:
    data = rezip(build(), {"word/document.xml": xml})
    with pytest.raises(BadFile, match=r"XML entity declarations are not accepted \(word/docu"):
        registry.read("report.docx", data)
