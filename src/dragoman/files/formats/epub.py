"""EPUB books (.epub): the XHTML content documents the package's spine lists, its navigation
document and its NCX table of contents. Each element holding text that is not itself inline
(`p`, `h1`, `li`, `td`, `figcaption`, a `div` with text, the `title`) is a segment; its inline
elements (`em`, `a`, `span`...) are markers around their text; images, breaks, code, maths and
a nested block are objects kept whole (a nested block is a segment of its own). Scripts,
styles, preformatted text and code are never translated; the package document, styles and
images are copied as they are."""

from __future__ import annotations

import posixpath
from urllib.parse import unquote

from lxml import etree

from dragoman.errors import BadFile
from dragoman.files.archive import Archive, unsafe_name
from dragoman.files.base import FileFormat, Limits
from dragoman.files.inline import Block
from dragoman.files.mixed import Paragraph
from dragoman.files.package import Package, Part
from dragoman.files.xmlsafe import parse

XHTML = "http://www.w3.org/1999/xhtml"
_OPF = "http://www.idpf.org/2007/opf"
_CONTAINER = "urn:oasis:names:tc:opendocument:xmlns:container"
_NCX = "http://www.daisy.org/z3986/2005/ncx/"
# Names as words, one string: shorter to read than a column of quoted names.
_INLINE = frozenset(
    "a abbr b bdi bdo big cite del dfn em font i ins label mark q s small span strike strong "  # noqa: SIM905
    "sub sup time tt u".split()
)
_UNTRANSLATED = frozenset("script style pre code kbd samp var template textarea".split())  # noqa: SIM905
_MEDIA_TYPE = "application/epub+zip"


def _html_name(element: etree._Element) -> str | None:
    """An XHTML element's name (None for any other node: SVG, MathML, a comment)."""
    if not isinstance(element.tag, str):
        return None
    name = etree.QName(element)
    return name.localname if name.namespace in (XHTML, None) else None


def _inline(element: etree._Element) -> bool:
    return _html_name(element) in _INLINE


def _xhtml(root: etree._Element) -> list[Block]:
    """Every element that is not inline, in document order; one without text is no segment."""
    blocks: list[Block] = []
    stack = [root]
    while stack:
        element = stack.pop()
        name = _html_name(element)
        if name is None or name in _UNTRANSLATED:
            continue
        if name not in _INLINE:
            blocks.append(Paragraph(element, _inline))
        stack.extend(reversed(element))
    return blocks


def _ncx(root: etree._Element) -> list[Block]:
    return [Paragraph(e, lambda _: False) for e in root.iter(f"{{{_NCX}}}text")]


def _path(archive: Archive, base: str, href: str) -> str:
    path = posixpath.normpath(posixpath.join(base, unquote(href.partition("#")[0])))
    if unsafe_name(path) or not archive.has(path):
        raise BadFile(f"the EPUB's package names {href[:200]!r}, which the book does not hold")
    return path


def _parts(archive: Archive) -> list[Part]:
    container = parse(archive.read("META-INF/container.xml"), "META-INF/container.xml")
    rootfile = container.find(f".//{{{_CONTAINER}}}rootfile")
    package = rootfile.get("full-path", "") if rootfile is not None else ""
    if not archive.has(package):
        raise BadFile("not an EPUB file: its container names no package document it holds")
    opf = parse(archive.read(package), package)
    base = posixpath.dirname(package)
    items = {i.get("id"): i for i in opf.iter(f"{{{_OPF}}}item")}
    spine = [items.get(r.get("idref")) for r in opf.iter(f"{{{_OPF}}}itemref")]
    documents = [
        i for i in spine if i is not None and i.get("media-type") == "application/xhtml+xml"
    ]
    documents += [i for i in items.values() if "nav" in (i.get("properties") or "").split()]
    tables = [i for i in items.values() if i.get("media-type") == "application/x-dtbncx+xml"]
    parts: dict[str, Part] = {}
    for item in documents + tables:
        path = _path(archive, base, item.get("href", ""))
        extract = _ncx if item in tables else _xhtml
        parts.setdefault(path, Part(path, extract, doctype=True))
    return list(parts.values())


def _read(data: bytes, limits: Limits) -> Package:
    archive = Archive(data, limits, "EPUB")
    if archive.has("mimetype") and archive.read("mimetype").strip() != _MEDIA_TYPE.encode():
        raise BadFile("not an EPUB file: its mimetype says otherwise")
    if not archive.has("META-INF/container.xml"):
        raise BadFile("not an EPUB file: the archive holds no META-INF/container.xml")
    return Package(archive, _parts(archive), limits)


FORMAT = FileFormat("epub", (".epub",), _MEDIA_TYPE, _read)
