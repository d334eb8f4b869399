"""HTML pages: the whole page one segment the service translates with its layout kept, decoded
in the charset it declares and written back in it, its language set to the target."""

from __future__ import annotations

from pathlib import Path

import pytest
from lxml import html as lxml_html

from dragoman.errors import BadFile
from dragoman.files import registry
from dragoman.files.base import Limits, Segment, render
from dragoman.files.formats import htmlpage
from tests.unit.files.textfakes import fuzz, translate

PAGE = (Path(__file__).parent / "samples" / "page.html").read_text()


def test_html_page_is_one_html_segment() -> None:
    parsed = htmlpage.FORMAT.read(PAGE.encode(), Limits())
    assert parsed.segments == [Segment(PAGE, "html")]


def test_html_page_translated_keeps_layout_code_and_translate_no() -> None:
    parsed = htmlpage.FORMAT.read(PAGE.encode(), Limits())
    out = render(parsed, translate(parsed), "de")
    doc = lxml_html.fromstring(out)
    assert doc.get("lang") == "de"
    assert doc.findtext(".//title") == "HELP & SUPPORT"
    assert doc.findtext(".//h1") == "GETTING STARTED"
    link = doc.find(".//a")
    assert link is not None
    assert (link.get("href"), link.get("title"), link.findtext("b")) == (
        "/save",
        "SAVE THE FILE",
        "SAVE",
    )
    assert doc.find(".//img").get("alt") == "COMPANY LOGO"
    assert doc.findtext(".//p[@translate='no']") == "Dragoman Inc."
    assert doc.findtext(".//code") == "dragoman serve --port 8000"
    assert [li.text for li in doc.iter("li")] == ["FIRST ITEM", "SECOND ITEM"]
    assert 'go("<p>no</p>")' in out.decode()
    assert "p { color: red; }" in out.decode()


def test_html_declared_charset_is_honoured_both_ways() -> None:
    page = '<html><head><meta charset="iso-8859-1"></head><body><p>Café crème</p></body></html>'
    parsed = htmlpage.FORMAT.read(page.encode("latin-1"), Limits())
    assert "Café crème" in parsed.segments[0].text
    out = parsed.render([parsed.segments[0].text.replace("Café crème", "Кофе · café")])
    assert b"caf\xe9" in out  # latin-1 bytes
    assert "Кофе" in lxml_html.fromstring(out.decode("latin-1")).text_content()


def test_html_http_equiv_charset_and_utf16_bom() -> None:
    page = (
        '<html><head><meta http-equiv="Content-Type" content="text/html; charset=windows-1252">'
        "</head><body><p>\u201cQuoted\u201d</p></body></html>"
    )
    (segment,) = htmlpage.FORMAT.read(page.encode("cp1252"), Limits()).segments
    assert "\u201cQuoted\u201d" in segment.text
    data = "<p>Hello</p>".encode("utf-16")
    parsed = htmlpage.FORMAT.read(data, Limits())
    assert parsed.segments == [Segment("<p>Hello</p>", "html")]
    assert parsed.render(["<p>Hallo</p>"]) == "<p>Hallo</p>".encode("utf-16")


def test_html_page_saying_utf7_in_ascii_is_read_as_utf8() -> None:
    page = '<meta charset="utf-7"><p>+ADw-script+AD4-</p><p>Caf\u00e9</p>'
    (segment,) = htmlpage.FORMAT.read(page.encode(), Limits()).segments
    assert segment.text == page


def test_html_lang_is_added_when_the_page_has_none() -> None:
    parsed = htmlpage.FORMAT.read(b"<!DOCTYPE html><html><body><p>Hi</p></body></html>", Limits())
    out = render(parsed, ["<!DOCTYPE html><html><body><p>Salut</p></body></html>"], "fr")
    assert b'<html lang="fr">' in out


def test_html_is_registered() -> None:
    assert registry.find("index.HTM") is htmlpage.FORMAT
    assert registry.find("index.html") is htmlpage.FORMAT


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"<p>caf\xe9</p>", "not utf-8 text"),
        (b'<meta charset="klingon"><p>x</p>', "charset we do not know"),
        (b'<meta charset="uu"><p>x</p>', "charset we do not know"),
        (b"<p>a\x00b</p>", "NUL"),
        (b"  \n ", "empty"),
        (b"<div>" * 300 + b"deep" + b"</div>" * 300, "not an HTML page we can translate"),
        (b'<p title="open>text that the quote swallows</p>', "not an HTML page we can translate"),
    ],
)
def test_html_malformed_is_bad_file(data: bytes, message: str) -> None:
    with pytest.raises(BadFile, match=message):
        htmlpage.FORMAT.read(data, Limits())


def test_html_reader_only_reads_or_refuses() -> None:
    fuzz(htmlpage.FORMAT.read, PAGE.encode(), examples=40)
