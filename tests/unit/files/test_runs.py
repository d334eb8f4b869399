"""Paragraphs of runs: formatting stretches become spans, objects voids, and a translation is
written back into runs that keep each stretch's properties and each object in place."""

from __future__ import annotations

from lxml import etree

from dragoman.files.formats.docx import DIALECT
from dragoman.files.inline import mark, place
from dragoman.files.runs import Paragraph

NS = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"'
B = "<w:rPr><w:b/></w:rPr>"


def paragraph(body: str) -> Paragraph:
    return Paragraph(etree.fromstring(f"<w:p {NS}>{body}</w:p>"), DIALECT)


def r(text: str, props: str = "") -> str:
    return f'<w:r w:rsidR="00A1">{props}<w:t xml:space="preserve">{text}</w:t></w:r>'


def runs(p: Paragraph) -> list[tuple[str, str]]:
    """Each child of the written paragraph: (its name, the text or properties it holds)."""
    out = []
    for child in p.element:
        name = etree.QName(child).localname
        if name == "r":
            rpr = child.find("w:rPr", child.nsmap)
            bold = rpr is not None and rpr.find("w:b", child.nsmap) is not None
            inner = [etree.QName(c).localname for c in child if etree.QName(c).localname != "rPr"]
            text = "".join(child.itertext())
            out.append(("r" + (" bold" if bold else ""), text if inner == ["t"] else inner[0]))
        else:
            out.append((name, "".join(child.itertext())))
    return out


def write(p: Paragraph, translated: str) -> None:
    p.write(place(mark(p.items), translated))


def test_plain_is_the_formatting_of_most_text() -> None:
    p = paragraph(r("Mostly bold and ", B) + r("plain") + r(" bold again", B))
    assert mark(p.items).text == "Mostly bold and <g1>plain</g1> bold again"


def test_runs_of_one_formatting_join_whatever_their_language() -> None:
    lang = '<w:rPr><w:b/><w:lang w:val="en-GB"/><w:noProof/></w:rPr>'
    p = paragraph(r("Start ") + r("bo", B) + "<w:proofErr/>" + r("ld", lang) + r(" end."))
    assert mark(p.items).text == "Start <g1>bold</g1> end."


def test_objects_are_voids_and_stay_inside_their_stretch() -> None:
    p = paragraph(
        '<w:pPr><w:jc w:val="center"/></w:pPr><w:bookmarkStart w:id="0" w:name="x"/>'
        + r("One ")
        + r("two", B)
        + f"<w:r>{B}<w:tab/></w:r>"
        + r("three", B)
        + '<w:bookmarkEnd w:id="0"/>'
        + r(" four")
    )
    assert mark(p.items).text == "<x1/>One <g2>two<x3/>three</g2><x4/> four"


def test_write_keeps_properties_objects_and_paragraph_properties() -> None:
    p = paragraph(
        '<w:pPr><w:jc w:val="center"/></w:pPr>'
        + r("One ")
        + r("two", B)
        + f"<w:r>{B}<w:tab/></w:r>"
        + r(" three")
    )
    assert mark(p.items).text == "One <g1>two</g1><x2/> three"
    write(p, "<g1>DEUX</g1> UN<x2/> TROIS")
    assert runs(p) == [
        ("pPr", ""),
        ("r bold", "DEUX"),
        ("r", " UN"),
        ("r bold", "tab"),
        ("r", " TROIS"),
    ]
    assert p.element[1].get(f"{{{DIALECT.ns}}}rsidR") == "00A1"  # the run's own attributes


def test_hyperlink_is_a_span_and_an_empty_one_a_void() -> None:
    link = '<w:hyperlink r:id="rId5" xmlns:r="urn:r">' + r("the site", B) + "</w:hyperlink>"
    image = '<w:hyperlink r:id="rId6" xmlns:r="urn:r"><w:r><w:drawing/></w:r></w:hyperlink>'
    p = paragraph(r("See ") + link + r(" or ") + image + r(" now."))
    assert mark(p.items).text == "See <g1>the site</g1> or <x2/> now."
    write(p, "<x2/>VOIR <g1>LE SITE</g1> MAINTENANT.")
    assert runs(p) == [
        ("hyperlink", ""),
        ("r", "VOIR "),
        ("hyperlink", "LE SITE"),
        ("r", " MAINTENANT."),
    ]
    assert p.element[2].find("w:r/w:rPr/w:b", p.element.nsmap) is not None


def test_dropped_span_text_joins_its_neighbours_and_objects_survive() -> None:
    p = paragraph(r("Hello ") + r("bold", B) + "<w:r><w:br/></w:r>" + r(" world"))
    write(p, "HELLO BOLD WORLD")
    kinds = [k for k, _ in runs(p)]
    assert "r bold" in kinds and ("r", "br") in runs(p)
    assert "".join(p.element.itertext()) == "HELLO BOLD WORLD"


def test_fields_keep_their_instructions_and_translate_their_result() -> None:
    simple = '<w:fldSimple w:instr=" REF note "><w:r><w:t>the note</w:t></w:r></w:fldSimple>'
    complex_field = (
        '<w:r><w:fldChar w:fldCharType="begin"/></w:r>'
        '<w:r><w:instrText xml:space="preserve"> PAGE </w:instrText></w:r>'
        '<w:r><w:fldChar w:fldCharType="separate"/></w:r>'
        + r("3")
        + '<w:r><w:fldChar w:fldCharType="end"/></w:r>'
    )
    p = paragraph(r("See ") + simple + r(" on page ") + complex_field)
    assert mark(p.items).text == "See <g1>the note</g1> on page <x2/><x3/><x4/>3<x5/>"
    write(p, "VOIR <g1>LA NOTE</g1> PAGE <x2/><x3/><x4/>3<x5/>")
    ns, w = p.element.nsmap, f"{{{DIALECT.ns}}}"
    assert p.element.find("w:fldSimple", ns).get(f"{w}instr") == " REF note "
    assert p.element.find("w:fldSimple/w:r/w:t", ns).text == "LA NOTE"
    assert [e.text for e in p.element.iter(f"{w}instrText")] == [" PAGE "]
    kinds = [c.get(f"{w}fldCharType") for c in p.element.iter(f"{w}fldChar")]
    assert kinds == ["begin", "separate", "end"]
