"""The XML parser files use: entity declarations refused, nothing expanded or fetched."""

from __future__ import annotations

import time

import pytest

from dragoman.errors import BadFile
from dragoman.files.xmlsafe import parse, serialize

LAUGHS = b"""<?xml version="1.0"?>
<!DOCTYPE lolz [
 <!ENTITY lol "lol">
 <!ENTITY lol1 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
 <!ENTITY lol2 "&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;">
 <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
 <!ENTITY lol4 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">
 <!ENTITY lol5 "&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;">
 <!ENTITY lol6 "&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;">
 <!ENTITY lol7 "&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;">
 <!ENTITY lol8 "&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;">
 <!ENTITY lol9 "&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;">
]>
<lolz a="&lol9;">&lol9;</lolz>"""

EXTERNAL = b"""<?xml version="1.0"?>
<!DOCTYPE foo [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>
<foo>&xxe;</foo>"""

PARAMETER = b"""<!DOCTYPE foo [<!ENTITY % p SYSTEM "http://127.0.0.1:9/x.dtd"> %p;]><foo/>"""


@pytest.mark.parametrize("data", [LAUGHS, EXTERNAL, PARAMETER, LAUGHS.decode().encode("utf-16")])
@pytest.mark.parametrize("doctype", [False, True])
def test_entity_declarations_refused(data: bytes, doctype: bool) -> None:
    start = time.monotonic()
    with pytest.raises(BadFile, match="XML entity declarations are not accepted"):
        parse(data, "word/document.xml", doctype=doctype)
    assert time.monotonic() - start < 1


def test_doctype_refused_unless_allowed() -> None:
    data = b'<!DOCTYPE html><html xmlns="http://www.w3.org/1999/xhtml"><p>Hi</p></html>'
    with pytest.raises(BadFile, match=r"not accepted \(content.xml\)"):
        parse(data, "content.xml")
    root = parse(data, "text.xhtml", doctype=True)
    assert serialize(root).startswith(b"<?xml version='1.0' encoding='UTF-8'?>\n<!DOCTYPE html>")


@pytest.mark.parametrize("data", [b"", b"<a>", b"<a></b>", b"\xff\xfe<", b"<a>&undefined;</a>"])
def test_malformed_refused(data: bytes) -> None:
    with pytest.raises(BadFile, match=r"ppt/slides/slide1\.xml is not well-formed XML"):
        parse(data, "ppt/slides/slide1.xml")


def test_serialize_keeps_standalone() -> None:
    data = b'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<w:document xmlns:w="u"/>'
    assert serialize(parse(data, "x")) == (
        b"<?xml version='1.0' encoding='UTF-8' standalone='yes'?>\n<w:document xmlns:w=\"u\"/>"
    )
