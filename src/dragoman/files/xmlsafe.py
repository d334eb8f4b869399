"""XML parsed without trusting it: no entity is expanded, no DTD or network resource loaded, no
huge-tree allowance, and a document that declares entities (billion laughs, external entities)
is refused outright rather than parsed around."""

from __future__ import annotations

from lxml import etree

from dragoman.errors import BadFile

_REFUSED = "XML entity declarations are not accepted"
# Looked for before parsing, in the encodings a parser takes without a declaration.
_DECLARATIONS = tuple("<!ENTITY".encode(e) for e in ("utf-8", "utf-16-le", "utf-16-be"))


def _parser() -> etree.XMLParser:
    return etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False, huge_tree=False)


def parse(data: bytes, what: str, *, doctype: bool = False) -> etree._Element:
    """The root of `data` (BadFile naming `what` when it is not well-formed). `doctype`: a
    document type line without declarations is accepted (XHTML's `<!DOCTYPE html>`); a
    declaration inside it never is."""
    if any(d in data for d in _DECLARATIONS):
        raise BadFile(f"{_REFUSED} ({what})")
    try:
        root = etree.fromstring(data, _parser())
    except (etree.XMLSyntaxError, ValueError) as e:
        raise BadFile(f"{what} is not well-formed XML ({e})") from None
    info = root.getroottree().docinfo
    subset = info.internalDTD
    declares = subset is not None and (
        any(True for _ in subset.entities()) or any(True for _ in subset.iterelements())
    )
    if declares or (info.doctype and not doctype):
        raise BadFile(f"{_REFUSED} ({what})")
    return root


def serialize(root: etree._Element) -> bytes:
    """The document as UTF-8 with its XML declaration, `standalone="yes"` kept (lxml reads
    a declaration without it as "no", which is what its absence means)."""
    tree = root.getroottree()
    standalone = True if tree.docinfo.standalone else None
    return etree.tostring(tree, xml_declaration=True, encoding="UTF-8", standalone=standalone)
