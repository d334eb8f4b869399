"""HTML pages (.html, .htm): the whole page one segment with markup "html"; the service parses
it, translates its blocks and attributes and keeps its layout, scripts and styles.

The page is decoded as a browser would start to: a byte order mark, else the charset its first
1,024 bytes declare (`<meta charset>` or `http-equiv`), else UTF-8; and written back in the same
encoding, a character that encoding lacks as a numeric reference. Read once by the service's
parser here, so a page it would refuse is refused at upload. `render_in` sets `<html lang>` to
the target."""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass

from dragoman.errors import BadFile, InvalidRequest
from dragoman.files.base import FileFormat, Limits, Segment
from dragoman.text.markup import parse_html

_PRESCAN = 1024
_META = re.compile(rb"<meta\s[^>]*?charset\s*+=\s*+[\"']?\s*+([-\w.:]++)", re.IGNORECASE)
_BOMS = (
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)
_HTML_TAG = re.compile(r"<html\b[^>]*+>", re.IGNORECASE)
_LANG = re.compile(r"""(\slang\s*+=\s*+)(?:"[^"]*+"|'[^']*+'|[^\s>]++)""", re.IGNORECASE)
_LANGUAGE_CODE = re.compile(r"[A-Za-z]{2,3}(?:-[A-Za-z0-9]{1,8})*")


@dataclass
class _Page:
    text: str
    encoding: str

    @property
    def segments(self) -> list[Segment]:
        return [Segment(self.text, "html")]

    def render(self, translated: list[str]) -> bytes:
        (page,) = translated
        return page.encode(self.encoding, "xmlcharrefreplace")

    def render_in(self, translated: list[str], target: str) -> bytes:
        (page,) = translated
        tag = _HTML_TAG.search(page)
        if tag and _LANGUAGE_CODE.fullmatch(target):
            old = tag.group()
            new, found = _LANG.subn(lambda m: f'{m.group(1)}"{target}"', old, count=1)
            if not found:
                new = f'{old[:5]} lang="{target}"{old[5:]}'
            page = page[: tag.start()] + new + page[tag.end() :]
        return self.render([page])


def _encoding(data: bytes) -> str:
    """The page's encoding. A UTF-8 mark is decoded as U+FEFF, which the service keeps in front
    of the page; UTF-16's codec reads and writes its own mark."""
    for bom, name in _BOMS:
        if data.startswith(bom):
            return name
    m = _META.search(data[:_PRESCAN])
    if not m:
        return "utf-8"
    name = m.group(1).decode("ascii")
    try:
        codec = codecs.lookup(name).name
        ascii_compatible = "<meta +>".encode(codec) == b"<meta +>"
    except (LookupError, UnicodeError):  # unknown, or no text encoding ('uu', 'base64')
        raise BadFile(f"the page declares a charset we do not know: {name!r}") from None
    # A page that says UTF-16 (or UTF-7) in ASCII bytes is not: browsers read it as UTF-8.
    return codec if ascii_compatible else "utf-8"


def _read(data: bytes, limits: Limits) -> _Page:
    encoding = _encoding(data)
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as e:
        raise BadFile(f"not {encoding} text, as the page says (byte {e.start})") from None
    if "\x00" in text:
        raise BadFile("not an HTML page (it holds NUL bytes)")
    if not text.strip():
        raise BadFile("the page is empty")
    try:
        parse_html(text)
    except InvalidRequest as e:
        raise BadFile(f"not an HTML page we can translate: {e.message}") from None
    return _Page(text, encoding)


FORMAT = FileFormat("html", (".html", ".htm"), "text/html", _read)
