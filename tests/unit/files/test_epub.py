"""EPUB books: a book made here (two chapters with headings, emphasis, links, an image, a
line break, a nested list, a table, code and a script; a navigation document; an NCX) comes
back with the same elements, every text translated but code and scripts, inline elements kept
around their text and objects in place."""

from __future__ import annotations

import io
import zipfile
from collections import Counter

import pytest
from lxml import etree

from dragoman.errors import BadFile
from dragoman.files import registry
from dragoman.files.base import Limits
from dragoman.files.formats.epub import FORMAT, XHTML
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

CONTAINER = b"""<?xml version="1.0"?>
<container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container">
  <rootfiles><rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/>
  </rootfiles></container>"""

OPF = b"""<?xml version="1.0" encoding="UTF-8"?>
<package xmlns="http://www.idpf.org/2007/opf" version="3.0" unique-identifier="id">
  <metadata xmlns:dc="http://purl.org/dc/elements/1.1/">
    <dc:identifier id="id">urn:uuid:1</dc:identifier><dc:title>A short book</dc:title>
    <dc:language>en</dc:language>
  </metadata>
  <manifest>
    <item id="nav" href="nav.xhtml" media-type="application/xhtml+xml" properties="nav"/>
    <item id="ncx" href="toc.ncx" media-type="application/x-dtbncx+xml"/>
    <item id="c1" href="text/chapter%201.xhtml" media-type="application/xhtml+xml"/>
    <item id="c2" href="text/chapter2.xhtml" media-type="application/xhtml+xml"/>
    <item id="css" href="style.css" media-type="text/css"/>
    <item id="img" href="images/map.png" media-type="image/png"/>
  </manifest>
  <spine toc="ncx"><itemref idref="c1"/><itemref idref="c2"/></spine>
</package>"""

PAGE = """<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE html>
<html xmlns="http://www.w3.org/1999/xhtml" xmlns:epub="http://www.idpf.org/2007/ops">
<head><title>{title}</title><link rel="stylesheet" href="../style.css"/>
<script>var note = "do not translate";</script></head>
<body>{body}</body></html>"""

CHAPTER_1 = PAGE.format(
    title="Chapter one",
    body="""
<h1 id="c1">The <em>first</em> chapter</h1>
<p>It was a <strong>dark</strong> night &amp; the <a href="chapter2.xhtml#c2">next one</a> was
worse.<br/>A new line follows.</p>
<p><img src="../images/map.png" alt="map"/> The map shows the <span class="place">old
town</span>.</p>
<ul><li>First item<ul><li>Nested item</li></ul></li><li>Second item</li></ul>
<table><tr><th>Name</th><th>Age</th></tr><tr><td>Ann</td><td>42</td></tr></table>
<p>Run <code>make all</code> before reading.</p>
<pre>keep   this as it is</pre>
<div>Loose text in a div <p>and a paragraph inside it</p> and more loose text.</div>
<p>1984</p>""",
)
CHAPTER_2 = PAGE.format(
    title="Chapter two",
    body='<section><h1 id="c2">Second chapter</h1><p>The end.</p></section>',
)
NAV = PAGE.format(
    title="Contents",
    body="""<nav epub:type="toc"><h2>Contents</h2><ol>
<li><a href="text/chapter%201.xhtml">Chapter one</a></li>
<li><a href="text/chapter2.xhtml">Chapter two</a></li></ol></nav>""",
)
NCX = b"""<?xml version="1.0" encoding="UTF-8"?>
<ncx xmlns="http://www.daisy.org/z3986/2005/ncx/" version="2005-1">
<head/><docTitle><text>A short book</text></docTitle><navMap>
<navPoint id="n1" playOrder="1"><navLabel><text>Chapter one</text></navLabel>
<content src="text/chapter%201.xhtml"/></navPoint></navMap></ncx>"""


def build() -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("mimetype", "application/epub+zip", zipfile.ZIP_STORED)
        zf.writestr("META-INF/container.xml", CONTAINER)
        zf.writestr("OEBPS/content.opf", OPF)
        zf.writestr("OEBPS/nav.xhtml", NAV)
        zf.writestr("OEBPS/toc.ncx", NCX)
        zf.writestr("OEBPS/text/chapter 1.xhtml", CHAPTER_1)
        zf.writestr("OEBPS/text/chapter2.xhtml", CHAPTER_2)
        zf.writestr("OEBPS/style.css", "p { margin: 0 }")
        zf.writestr("OEBPS/images/map.png", b"\x89PNG\r\n\x1a\n" + bytes(64))
    return out.getvalue()


def page(data: bytes, name: str) -> etree._Element:
    return etree.fromstring(entries(data)[f"OEBPS/{name}"])


def tags(root: etree._Element) -> Counter[str]:
    return Counter(etree.QName(e).localname for e in root.iter() if isinstance(e.tag, str))


def h(name: str) -> str:
    return f"{{{XHTML}}}{name}"


def test_segments() -> None:
    segments = [s.text for s in FORMAT.read(build(), Limits()).segments]
    assert segments[:3] == [
        "Chapter one",
        "The <g1>first</g1> chapter",
        "It was a <g1>dark</g1> night &amp; the <g2>next one</g2> was\nworse.<x3/>A new line "
        "follows.",
    ]
    assert "<x1/> The map shows the <g2>old\ntown</g2>." in segments
    assert "First item<x1/>" in segments and "Nested item" in segments
    assert "Run <x1/> before reading." in segments
    assert "Loose text in a div <x1/> and more loose text." in segments
    assert "and a paragraph inside it" in segments
    assert {"Name", "Ann", "Second chapter", "Contents", "A short book"} <= set(segments)
    assert segments.count("<g1>Chapter one</g1>") == 1  # the navigation document's entry
    assert not [s for s in segments if "translate" in s or "keep" in s or "1984" in s]


def test_round_trip_keeps_elements_and_translates_all_text() -> None:
    source = build()
    _, out = round_trip(FORMAT, source, shout)
    for name in ("text/chapter 1.xhtml", "text/chapter2.xhtml", "nav.xhtml", "toc.ncx"):
        assert tags(page(out, name)) == tags(page(source, name))
    chapter = page(out, "text/chapter 1.xhtml")
    skipped = {h(n) for n in ("script", "style", "pre", "code")}
    texts = [
        t
        for e in chapter.iter()
        if e.tag not in skipped and isinstance(e.tag, str)
        for t in (e.text, e.tail)
        if t
    ]
    assert not [t for t in texts if has_lower_letters(t)]
    assert chapter.find(f".//{h('code')}").text == "make all"
    assert chapter.find(f".//{h('pre')}").text == "keep   this as it is"
    assert "do not translate" in chapter.find(f".//{h('script')}").text
    link = chapter.find(f".//{h('a')}")
    assert (link.get("href"), link.text) == ("chapter2.xhtml#c2", "NEXT ONE")
    assert chapter.find(f".//{h('img')}").get("alt") == "map"
    assert chapter.find(f".//{h('em')}").text == "FIRST"
    assert entries(out)["OEBPS/text/chapter 1.xhtml"].startswith(
        b"<?xml version='1.0' encoding='UTF-8'?>\n<!DOCTYPE html>"
    )
    ncx = page(out, "toc.ncx")
    assert ["".join(t.itertext()) for t in ncx.iter("{*}text")] == ["A SHORT BOOK", "CHAPTER ONE"]
    for name in ("OEBPS/content.opf", "OEBPS/style.css", "OEBPS/images/map.png"):
        assert entries(out)[name] == entries(source)[name]
    assert out[30:38] == b"mimetype" and out[38:58] == b"application/epub+zip"


def test_reordered_markers_move_the_inline_elements() -> None:
    _, out = round_trip(FORMAT, build(), reverse)
    p = page(out, "text/chapter 1.xhtml").find(f".//{h('p')}")
    assert [etree.QName(c).localname for c in p] == ["br", "a", "strong"]
    assert p.find(h("strong")).text == "DARK"


@pytest.mark.parametrize("translate", [drop_markers, garble])
def test_lost_or_garbled_markers_keep_every_element(translate: object) -> None:
    assert callable(translate)
    source = build()
    _, out = round_trip(FORMAT, source, translate)
    for name in ("text/chapter 1.xhtml", "nav.xhtml"):
        assert tags(page(out, name)) == tags(page(source, name))


def test_not_an_epub_refused() -> None:
    with pytest.raises(BadFile, match=r"holds no META-INF/container\.xml"):
        registry.read("book.epub", rezip(build(), {"META-INF/container.xml": None}))
    with pytest.raises(BadFile, match=r"names 'text/chapter2\.xhtml', which the book does not"):
        registry.read("book.epub", rezip(build(), {"OEBPS/text/chapter2.xhtml": None}))
    with pytest.raises(BadFile, match="its mimetype says otherwise"):
        registry.read("book.epub", rezip(build(), {"mimetype": b"application/zip"}))
    with pytest.raises(BadFile, match="not a readable EPUB file"):
        registry.read("book.epub", b"<html>not a book</html>")


def test_entities_in_a_chapter_refused() -> None:
    chapter = b'<!DOCTYPE html [<!ENTITY e SYSTEM "file:///etc/passwd">]><html><p>&e;</p></html>'
    with pytest.raises(BadFile, match="XML entity declarations are not accepted"):
        registry.read("book.epub", rezip(build(), {"OEBPS/text/chapter2.xhtml": chapter}))
