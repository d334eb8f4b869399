"""Parsing HTML or XML into units to translate, and putting the translations back.

Both go through lxml (libxml2). HTML is parsed leniently: malformed markup is repaired by the
parser, refused only where the parser would drop the user's text (a quote left open, `_quotes`;
nesting too deep). XML is parsed strictly and safely (no entity expansion, no DTD loading, no
network), as DeepL's `tag_handling=xml`: malformed XML is an `InvalidRequest`.

The output is the same document, not the same bytes; the normalisation is lxml's:
- entities and character references are decoded (`&eacute;` is é, `&nbsp;` is U+00A0) and only
  `&`, `<`, `>` (and `"` in attributes) are written back as references;
- HTML: unclosed elements are closed, stray end tags dropped, attributes double-quoted, void
  elements written `<br>` (also those libxml2 does not know, `_void`), non-ASCII in URL
  attributes (href, src, ...) percent-encoded;
- XML: entities declared in the document's DTD stay references, never expanded;
- inside a translated block, runs of HTML whitespace are one space (as a browser renders them;
  XML inside `xml:space="preserve"` keeps them);
  the block's leading and trailing whitespace, and everything untranslated, are kept as parsed.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any

from lxml import etree

from dragoman.errors import InvalidRequest
from dragoman.text.letters import unused_private_char
from dragoman.text.markup._ends import copy_tree, html_trail, xml_trail
from dragoman.text.markup._extract import Attribute, Extractor, Run, held_text
from dragoman.text.markup._parts import restore as restore_parts
from dragoman.text.markup._parts import stand_in
from dragoman.text.markup._quotes import check_open_quote
from dragoman.text.markup._void import drop_ends, end_mark, mark_ends, may_hold, self_close
from dragoman.text.markup.markers import (
    Content,
    Token,
    plain,
    to_content,
    tokenize,
    unescape_text,
    without_markers,
)

_WRAPPER = "root"  # the element an XML fragment is parsed inside
MAX_HTML_DEPTH = 255  # libxml2's, without its "huge" option (XML: refused with its message)
_XML_DECLARATION = re.compile(r"<\?xml\s[^>]*\?>\s*")
_XML_PROLOGUE = re.compile(
    r"(?:\s++|<!--(?>.*?-->)|<\?(?>.*?\?>))*+<!DOCTYPE", re.IGNORECASE | re.DOTALL
)
_POSITION = re.compile(r", line \d+, column \d+$")
# Characters XML cannot hold (lxml refuses them); a model may emit them.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
_SURROGATE = re.compile("[\ud800-\udfff]")
# Elements libxml2 parses as raw text but serializes escaped.
_RAW_TEXT = ("iframe", "noembed", "noframes", "plaintext", "xmp")
# `translate="no"` or class `notranslate`: an attribute's name is written as it is, and a value's
# letters could only be written otherwise as numeric references (no named one is a letter).
_MAY_MARK = re.compile("translate|&#", re.IGNORECASE)
_MAY_HOLD_RAW = re.compile("<(?:iframe|noembed|noframes|plaintext|xmp)", re.IGNORECASE)
# A whole document: a DOCTYPE or <html> (not a custom <html-x>) first, after a byte order mark,
# spaces, comments or an XML declaration (XHTML). Atomic and possessive: a comment ends at its
# first `-->`, and nothing is tried again (a text of many `-->` would otherwise be rescanned
# from each).
_MAY_END = re.compile(r"</(?:body|html)", re.IGNORECASE)
# What `_early_ends` steps over, each to its end (or the text's: an element or comment left
# open takes the rest, so each opener is read once and the scan stays linear): raw-text elements
# and comments, and other start tags with their attribute values (`title="</body>"`).
_ENDS = re.compile(
    r"<(script|style|textarea|title|xmp|iframe|noembed|noframes|noscript|plaintext)\b"
    r"(?>.*?(?:</\1\s*>|\Z))"
    r"|<!--(?>.*?(?:-->|\Z))"
    r"|<[a-zA-Z](?:[^>\"']++|\"[^\"]*+\"|'[^']*+')*+>?"
    r"|</(?:body|html)\s*>",
    re.IGNORECASE | re.DOTALL,
)
_ONLY_ENDS = re.compile(
    r"(?:\s++|<!--(?>.*?-->)|</(?:body|html)\s*>)*+\Z", re.IGNORECASE | re.DOTALL
)
_XHTML = re.compile(r"<(?:html|!doctype\s+html)(?=[\s/>])", re.IGNORECASE)
_DOCUMENT = re.compile(
    r"\ufeff?(?:\s++|<!--(?>.*?-->)|<\?xml\s[^>]*+>)*+<(!doctype|html)(?=[\s/>])",
    re.IGNORECASE | re.DOTALL,
)


@dataclass
class Markup:
    units: list[str]
    """Text to translate, one per block (p, li, h1-h6, td, th, div, title, option, ...) and per
    translatable attribute (title, alt, placeholder, aria-label, input[type=submit|button|reset]
    value, meta[name=description] content), in document order. Whitespace is collapsed inside
    a block; inline elements are `<gN>…</gN>` markers, void or opaque ones `<xN/>` (numbered
    from 1 in each unit). Blocks with no letters are not units."""
    markers: list[tuple[str, ...]] = field(default_factory=list)
    """The marker names each unit holds ("g1", "x2", ...), for `validate`."""
    _source: str = field(default="", repr=False)
    _root: Any = field(default=None, repr=False)
    _kind: str = field(default="verbatim", repr=False)
    _slots: list[Run | Attribute] = field(default_factory=list, repr=False)
    _declaration: str = field(default="", repr=False)
    _literal: str | None = field(default=None, repr=False)
    _raw: tuple[str, tuple[str, ...], int] = field(default=("", (), 0), repr=False)
    """HTML: the mark and the texts of `_RAW_TEXT` elements (`_set_aside`)."""
    _void_mark: str = field(default="", repr=False)
    """HTML: the mark of the end tags of void elements libxml2 does not know (`_void`)."""
    _trail: str = field(default="", repr=False)
    """A document's whitespace after its root element, which the parser drops."""

    def words(self) -> str:
        """The text to translate without its markup, a unit a line: what its language is told
        from (never a script, a stylesheet, code or a part kept as it is)."""
        return "\n".join(map(without_markers, self.units))

    def rebuild(self, translations: list[str]) -> tuple[str, list[str]]:
        """The document with each unit replaced by its translation (same order as `units`),
        markers mapped back to the original elements with their attributes, and the repairs
        made ("unit 3: missing g1"; the word after the colon is the kind). A reply whose
        markers are missing, duplicated, invented, unclosed or misnested is repaired so that
        every original element is present exactly once."""
        if len(translations) != len(self.units):
            raise ValueError(f"{len(translations)} translations for {len(self.units)} units")
        if self._kind == "verbatim":
            return self._source, []
        root = copy_tree(self._root)
        top = root.getroot() if isinstance(root, etree._ElementTree) else root
        nodes = list(top.iter())
        repairs: list[str] = []
        mark = self._raw[0]
        for i, (slot, unit, reply) in enumerate(
            zip(self._slots, self.units, translations, strict=True)
        ):
            reply = _NOT_XML.sub("", reply)
            if mark and mark in reply:  # only the document's raw texts are put back
                reply = reply.replace(mark, "")
            if isinstance(slot, Attribute):
                text = plain(reply)
                if text != reply:
                    repairs.append(f"unit {i}: invented markers in an attribute")
                text = unescape_text(text, self._literal)
                value = _NOT_XML.sub("", slot.prefix + text + slot.suffix)
                nodes[slot.node].set(slot.name, value)
                continue
            texts = _texts(reply, slot.shape)
            if texts is not None:  # the commonest: no marker moved
                _fill(nodes, slot, texts, self._literal)
                continue
            content, problems = to_content(unit, reply, self.markers[i])
            repairs += [f"unit {i}: {p}" for p in problems]
            _replace(nodes, slot, content, self._literal)
        if self._void_mark:
            mark_ends(top, self._void_mark)
        out = _serialize(root, self._kind)
        if self._void_mark:
            out = drop_ends(out, self._void_mark)
        out = _put_back(out, *self._raw)
        return self._declaration + out + self._trail, repairs


def parse_html(text: str, ignore_tags: Collection[str] = ()) -> Markup:
    """A fragment, or a whole document when it starts with `<!DOCTYPE` or `<html` (a
    fragment's own `<head>` and `<body>` tags are kept where they stand: `_parts`). Malformed
    HTML is repaired by the parser; only HTML nested deeper than MAX_HTML_DEPTH elements (the
    parser's limit, past which it drops content) and an attribute value's quote left open over
    the text after its tag (`_quotes`) raise `InvalidRequest`. The content of `script style
    code pre kbd samp var textarea svg math` is kept verbatim (their own `title`/`placeholder`
    are still translated); elements with `translate="no"`, class
    `notranslate`, or a tag in `ignore_tags` are kept whole, attributes included
    (`translate="yes"` inside one is not honoured)."""
    source = _SURROGATE.sub("\ufffd", text)  # libxml2 would drop the whole text
    check_open_quote(source)  # a value's quote left open over the text: refused, never lost
    head = _DOCUMENT.match(source)
    if head and "<?" in source[: head.start(1)] and not _XHTML.match(source, head.start(1) - 1):
        head = None  # XML sent as HTML: a fragment, as it always was
    plain, parts = source, ""
    if not head:
        source, parts = stand_in(source)
    source, voids = _prepare(source)
    # What comes before a document's DOCTYPE or <html> (a byte order mark, spaces, comments) is
    # never translated and is written back as sent: lxml would drop the mark and write the
    # comments after the DOCTYPE.
    before = source[: head.start(1) - 1] if head else ""
    # lxml.etree's own elements: lxml.html's element classes cost a third more here
    parser = etree.HTMLParser(no_network=True)
    try:
        if head:
            parsed = etree.fromstring(source[len(before) :], parser)
            root = None if parsed is None else parsed.getroottree()
            # without a DOCTYPE, lxml would write its HTML 4.0 one: written without one
            kind = "html-element" if head.group(1).lower() == "html" else "html-document"
        else:
            # no closing tags after the text: a tag or comment left open at its end would
            # swallow them
            root = etree.fromstring(f"<html><body>{source}", parser).find("body")
            kind = "html-fragment"
            if root is not None and not restore_parts(root, parts):
                # a stand-in's name read as text (a script's `<!--<script>`): none is used
                source, voids = _prepare(plain)
                parser = etree.HTMLParser(no_network=True)
                root = etree.fromstring(f"<html><body>{source}", parser).find("body")
    except (etree.ParserError, ValueError):
        root = None
    if any(e.type == etree.ErrorTypes.ERR_RESOURCE_LIMIT for e in parser.error_log):
        # libxml2 stops at 256 levels and drops what is deeper: refused, not lost
        raise InvalidRequest(f"HTML nested deeper than {MAX_HTML_DEPTH} elements")
    if root is None:  # nothing the parser could make a tree of
        return Markup([], _source=text)
    ignore = {t.lower() for t in ignore_tags}
    top = root.getroot() if isinstance(root, etree._ElementTree) else root
    trail = html_trail(source, top) if head else ""
    raw = _set_aside(root, source)
    mark = end_mark(top, source + held_text(top)) if voids else ""
    extractor = Extractor(
        xml=False, ignore=ignore, index={}, marked=_MAY_MARK.search(source) is not None
    )
    return _extract(text, root, kind, extractor, before, raw, mark, trail)


def _prepare(source: str) -> tuple[str, bool]:
    """`source` as libxml2 is given it (`_early_ends`, `_void`), and whether it may hold a
    void element libxml2 does not know."""
    source = _early_ends(source)
    voids = may_hold(source)
    return (self_close(source) if voids else source), voids


def _early_ends(source: str) -> str:
    """`source` without its `</body>` and `</html>` end tags when content follows them:
    libxml2 drops everything after `</html>` (a page's closing scripts), where a browser puts
    it in the body (a fragment's `</body>` is a stand-in's by now, `_parts`, and stays). End
    tags inside comments and raw-text elements (a script's strings) are text, not tags."""
    if "</" not in source or not _MAY_END.search(source):
        return source
    ends = [m for m in _ENDS.finditer(source) if m.group().startswith("</")]
    if not ends or _ONLY_ENDS.match(source, ends[0].end()):
        return source  # nothing after them but space and comments: kept where they are
    out, at = [], 0
    for m in ends:
        out.append(source[at : m.start()])
        at = m.end()
    return "".join(out) + source[at:]


def parse_xml(text: str, ignore_tags: Collection[str] = ()) -> Markup:
    """XML, strictly (DeepL `tag_handling=xml`): a document (with an XML declaration or a
    DOCTYPE) or a fragment of mixed text and elements. Raises `InvalidRequest("Tag handling
    parsing failed: ...")` on malformed XML. Only `ignore_tags` are kept verbatim."""
    parser = etree.XMLParser(
        resolve_entities=False, no_network=True, load_dtd=False, huge_tree=False
    )
    # A byte order mark, the declaration, and what precedes a DOCTYPE (spaces, comments,
    # processing instructions) are kept as sent and written back before the rest.
    bom = "\ufeff" if text.startswith("\ufeff") else ""
    declaration = _XML_DECLARATION.match(text, len(bom))
    start = declaration.end() if declaration else len(bom)
    prologue = _XML_PROLOGUE.match(text, start)
    document = bool(declaration) or prologue is not None
    if prologue is not None:
        start = prologue.end() - len("<!DOCTYPE")
    kept, body = text[:start], text[start:]
    source = body if document else f"<{_WRAPPER}>{body}</{_WRAPPER}>"
    try:
        parsed = etree.fromstring(source, parser)
    except etree.XMLSyntaxError as e:
        reason = _reason(e, text, kept, document)
        raise InvalidRequest(f"Tag handling parsing failed: {reason}") from e
    except ValueError as e:
        raise InvalidRequest(f"Tag handling parsing failed: {e}") from e
    trail = ""
    if document:
        root: Any = parsed.getroottree()
        kind = "xml-document"
        trail = xml_trail(text)
    else:
        root, kind = parsed, "xml-fragment"
    extractor = Extractor(xml=True, ignore=set(ignore_tags), index={}, spaced="xml:space" in text)
    # lxml writes no XML declaration into a str: keep the one sent
    return _extract(text, root, kind, extractor, kept, trail=trail)


def _extract(
    text: str,
    root: Any,
    kind: str,
    extractor: Extractor,
    declaration: str = "",
    raw: tuple[str, tuple[str, ...], int] = ("", (), 0),
    void_mark: str = "",
    trail: str = "",
) -> Markup:
    top = root.getroot() if isinstance(root, etree._ElementTree) else root
    extractor.prepare(top)
    if not extractor.kept(top):  # <html translate="no">: the whole document as it is
        extractor.walk(top)
    return Markup(
        extractor.units,
        extractor.markers,
        _source=text,
        _root=root,
        _kind=kind,
        _slots=extractor.slots,
        _declaration=declaration,
        _literal=extractor.literal or None,
        _raw=raw,
        _void_mark=void_mark,
        _trail=trail,
    )


def _texts(reply: str, shape: tuple[Token, ...]) -> list[str] | None:
    """The reply's text before, between and after its markers when they are the source's, in
    the source's order (so the reply is right as it is: `to_content` would rebuild the same
    tree); None otherwise."""
    if not shape and "<" not in reply:
        return [reply]
    texts = [""]
    at = 0
    for token in tokenize(reply):
        if token[0] == "t":
            texts[-1] = token[1]  # tokenize yields no two texts in a row
        elif at < len(shape) and token == shape[at]:
            at += 1
            texts.append("")
        else:
            return None
    return texts if at == len(shape) else None


def _fill(nodes: list[Any], run: Run, texts: list[str], literal: str | None) -> None:
    """Put a translated run in place of the original one when its markers kept their order:
    each text where the source's stood, the elements untouched."""
    if literal:
        texts = [unescape_text(t, literal) for t in texts]
    texts[0] = run.prefix + texts[0]
    texts[-1] += run.suffix
    if run.after is None:
        nodes[run.container].text = texts[0]
    else:
        nodes[run.after].tail = texts[0]
    for (kind, name), text in zip(run.shape, texts[1:], strict=True):
        node = nodes[run.markers[name]]
        if kind == "o":
            node.text = text or None
        else:
            node.tail = text or None


def _replace(nodes: list[Any], run: Run, content: Content, literal: str | None) -> None:
    """Put a translated run in place of the original one, reusing the original elements."""
    container = nodes[run.container]
    after = None if run.after is None else nodes[run.after]
    for name, index in run.markers.items():
        if name[0] == "g":
            del nodes[index][:]  # its children are markers of this run too, placed again
    for index in run.children:
        container.remove(nodes[index])
    text, children = _build(nodes, run, content, literal)
    prefix, suffix = run.prefix, run.suffix
    if children:
        children[-1].tail = (children[-1].tail or "") + suffix
    else:
        text += suffix
    if after is None:
        container.text = prefix + text
        at = 0
    else:
        after.tail = prefix + text
        at = container.index(after) + 1
    for k, child in enumerate(children):
        container.insert(at + k, child)


def _build(
    nodes: list[Any], run: Run, content: Content, literal: str | None
) -> tuple[str, list[Any]]:
    text = ""
    children: list[Any] = []
    for item in content:
        if isinstance(item, str):
            if literal:
                item = unescape_text(item, literal)
            if children:
                children[-1].tail = (children[-1].tail or "") + item
            else:
                text += item
            continue
        node = nodes[run.markers[item.name]]
        node.tail = None
        if item.name[0] == "g":
            inner, kids = _build(nodes, run, item.content, literal)
            node.text = inner or None
            node.extend(kids)
        children.append(node)
    return text, children


def _set_aside(root: Any, source: str) -> tuple[str, tuple[str, ...], int]:
    """libxml2 reads the content of `_RAW_TEXT` elements as raw text and writes it escaped
    (`<iframe>a &amp; b</iframe>` came back `a &amp;amp; b`, more on each pass): each such
    text is replaced by a numbered stand-in between two marks, and `_put_back` writes it as it
    was sent. The mark is a private-use character that neither the source nor the parsed
    document holds (a character reference such as `&#xE000;` is one once parsed). Their
    content is never translated (SKIP_TAGS). Returns the mark ("" when nothing was set aside),
    the texts, and the number of a `plaintext`'s text (0 if none: `_put_back`)."""
    if not _MAY_HOLD_RAW.search(source):
        return "", (), 0
    top = root.getroot() if isinstance(root, etree._ElementTree) else root
    nodes = [node for node in top.iter(*_RAW_TEXT) if node.text]
    if not nodes:
        return "", (), 0
    mark = unused_private_char(source + held_text(top))
    if mark is None:
        return "", (), 0
    texts: list[str] = []
    plaintext = 0
    for node in nodes:
        texts.append(node.text)
        node.text = f"{mark}{len(texts)}{mark}"
        if node.tag == "plaintext" and not plaintext:
            plaintext = len(texts)
    return mark, tuple(texts), plaintext


def _put_back(out: str, mark: str, texts: tuple[str, ...], plaintext: int) -> str:
    if not texts:
        return out
    if plaintext:
        # `plaintext` takes the rest of the document as its text: what lxml writes after it
        # is only end tags, which the source did not have
        stand_in = f"{mark}{plaintext}{mark}"
        at = out.find(stand_in)
        if at >= 0:
            out = out[: at + len(stand_in)]

    def text(m: re.Match[str]) -> str:
        n = int(m.group(1))
        return texts[n - 1] if 1 <= n <= len(texts) else ""

    return re.sub(f"{mark}(\\d+){mark}", text, out)


def _serialize(root: Any, kind: str) -> str:
    if kind.startswith("html"):
        # libxml2 writes an empty <li> without its end tag (optional in HTML), so what follows
        # it in the list (text, a <p>) would be read into the item: an empty text keeps it.
        for item in root.iter("li"):
            if item.text is None and len(item) == 0:
                item.text = ""
    if kind == "html-document":
        return str(etree.tostring(root, encoding="unicode", method="html"))
    if kind == "html-element":  # comments around the element kept, no DOCTYPE invented
        out = str(etree.tostring(root, encoding="unicode", method="html", doctype=""))
        return out.removeprefix("\n")
    if kind == "html-fragment":
        root.attrib.clear()
        out = str(etree.tostring(root, encoding="unicode", method="html", with_tail=False))
        return out.removeprefix("<body>").removesuffix("</body>")
    if kind == "xml-fragment":
        out = str(etree.tostring(root, encoding="unicode", with_tail=False))
        if out == f"<{_WRAPPER}/>":
            return ""
        return out.removeprefix(f"<{_WRAPPER}>").removesuffix(f"</{_WRAPPER}>")
    return str(etree.tostring(root, encoding="unicode"))


def _reason(error: etree.XMLSyntaxError, text: str, before: str, document: bool) -> str:
    """libxml2's message, positioned in the text as sent: `before` is what was cut from its
    start (an XML declaration), and a fragment was parsed inside a wrapper element."""
    message = _POSITION.sub("", str(error.msg).strip()).strip()
    if not document:  # name the user's tags, not our wrapper
        message = re.sub(
            rf"^Opening and ending tag mismatch: (\S+) line (\d+) and {_WRAPPER}$",
            r"element <\1> opened on line \2 is not closed",
            message,
        )
        message = re.sub(
            rf"^Opening and ending tag mismatch: {_WRAPPER} line \d+ and (\S+)$",
            r"end tag </\1> closes no open element",
            message,
        )
    line, column = error.position
    if line == 1:
        column += len(before.rpartition("\n")[2]) - (0 if document else len(_WRAPPER) + 2)
    line += before.count("\n")
    lines = text.split("\n")
    if line <= len(lines):  # an error at the wrapper's end tag is at the end of the text
        column = min(column, len(lines[line - 1]) + 1)
    return f"{message} (line {line}, column {max(column, 1)})"
