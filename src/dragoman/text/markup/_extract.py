"""Finding the units of a parsed tree. A unit is a run of inline content (text and inline
elements) inside one splitting element, bounded by the splitting children: `<div>Hi <b>you</b>
<p>x</p> bye</div>` holds three. Inline elements in a run become `<gN>` markers, void and opaque
ones `<xN/>`; a run that is one inline element with only whitespace around it (`<li><a
href>Home</a></li>`) is the element's content, so the model sees no marker for it. HTML also
has translatable attributes. XML has no vocabulary, so there an element is inline when its
parent holds text of its own (mixed content) and splitting otherwise."""

from __future__ import annotations

import re
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from dragoman.text.letters import has_letters
from dragoman.text.markup.markers import Token, escape_text, literal_lt, reads_as_marker


def _tags(names: str) -> frozenset[str]:
    return frozenset(names.split())


# Elements that split the text into units (sentences never run across them).
BLOCK_TAGS = _tags(
    "address article aside base blockquote body button caption center col colgroup dd details "
    "dialog dir div dl dt fieldset figcaption figure footer form frame frameset h1 h2 h3 h4 h5 "
    "h6 head header hgroup hr html label legend li link main menu meta nav noframes noscript ol "
    "optgroup option p pre search section select summary table tbody td template tfoot th thead "
    "title tr ul xmp plaintext"
)
INLINE_TAGS = _tags(
    "a abbr acronym b bdi bdo big cite data del dfn em font i ins mark nobr q rb rp rt rtc ruby "
    "s small span strike strong sub sup time tt u"
)
# Kept whole inside a sentence, as one <xN/> marker: HTML5's void elements that are no block
# (libxml2 knows only some: markup/_void.py) and the opaque ones.
VOID_TAGS = _tags(
    "area audio br canvas embed iframe img input keygen map meter object param picture progress "
    "source track video wbr"
)
# Never translated, kept verbatim (with `translate="no"`, `class="notranslate"`, ignore_tags).
# iframe noembed noframes plaintext xmp: raw text to the parser (document.py: _RAW_TEXT).
SKIP_TAGS = _tags(
    "script style code pre kbd samp var textarea svg math iframe noembed noframes plaintext xmp"
)
_BUTTONS = frozenset(("submit", "button", "reset"))
"""`<input type>`s whose value is the text their button shows."""
ATTRIBUTES = ("title", "alt", "placeholder", "aria-label")
_TRANSLATED = frozenset(ATTRIBUTES)

BLOCK, INLINE, VOID, SKIP = "block", "inline", "void", "skip"
_SPACES = " \t\n\f\r"  # HTML whitespace; U+00A0 is text
_XML_SPACE = "{http://www.w3.org/XML/1998/namespace}space"
_WS = re.compile(f"[{_SPACES}]+")


class Run(NamedTuple):
    """Where a unit's inline run sits: in `container`, after the splitting child `after` (None:
    at the container's start, in its text), over the children `children`; nodes by their
    position in the tree's document order."""

    container: int
    after: int | None
    children: tuple[int, ...]
    markers: dict[str, int]
    prefix: str
    suffix: str
    """The whitespace before and after the unit, kept as it was (but for form feeds)."""
    shape: tuple[Token, ...]
    """The unit's markers in source order: a reply holding the same, in the same order, puts
    its text straight back where the source's was (`document._fill`)."""


class Attribute(NamedTuple):
    node: int
    name: str
    prefix: str
    suffix: str


Slot = Run | Attribute


def _ignored(node: Any, ignore: Collection[str]) -> bool:
    """Whether an XML element is one of `ignore`: by its name as written (`x:code`, what a
    DeepL user names), its local name (`code`, any namespace) or its `{uri}code` name."""
    if not isinstance(node.tag, str):  # a comment or processing instruction
        return False
    local = node.tag.rpartition("}")[2]
    written = f"{node.prefix}:{local}" if node.prefix else local
    return node.tag in ignore or local in ignore or written in ignore


@dataclass
class Extractor:
    xml: bool
    ignore: Collection[str]
    index: dict[Any, int]
    units: list[str] = field(default_factory=list)
    slots: list[Slot] = field(default_factory=list)
    markers: list[tuple[str, ...]] = field(default_factory=list)
    _kept: set[Any] = field(default_factory=set)
    """The elements kept verbatim, attributes included (a `<pre>` is only kept for its
    content): by `translate="no"`, class `notranslate` or `ignore`; found in `prepare`."""
    _skip: set[Any] = field(default_factory=set)
    """The elements whose content is kept verbatim: `_kept` and HTML's SKIP_TAGS."""
    _holds_block: set[Any] = field(default_factory=set)
    """HTML: the elements with a splitting element inside."""
    _flow: dict[Any, str] = field(default_factory=dict)
    """`_in_flow`'s answers, asked of a run's nodes several times."""
    marked: bool = True
    """HTML: whether the source may hold `translate` or `notranslate` (prepare looks for them
    only then: a search of the text is quicker than one of the tree)."""
    spaced: bool = False
    """XML: whether the source may hold `xml:space` (prepare looks for it only then)."""
    _preserved: set[Any] = field(default_factory=set)
    """XML: the elements inside `xml:space="preserve"` (and not back to "default"), whose
    runs keep their whitespace as it is."""
    literal: str | None = None
    """What stands for the `<` of text that reads as a marker, chosen at the first such text
    (markers.literal_lt): a character no text or attribute of the document holds."""
    _top: Any = None

    def prepare(self, top: Any) -> None:
        """Index the tree's nodes in document order and find, in one pass each, the elements
        kept whole (by tag, attributes or `ignore`) and, for HTML, those holding a splitting
        element, rather than asking every node on the walk."""
        self._top = top
        nodes = list(top.iter())
        self.index.update(zip(nodes, range(len(nodes)), strict=True))
        if self.xml:
            if self.spaced:
                self._preserved = _preserved(top)
            if self.ignore:
                self._kept.update(node for node in nodes if _ignored(node, self.ignore))
            self._skip = self._kept
            return
        if self.marked:
            self._kept.update(
                node
                for node in top.xpath("descendant-or-self::*[@translate or @class]")
                if (node.get("translate") or "").strip().lower() == "no"
                or "notranslate" in (node.get("class") or "").split()
            )
        if self.ignore:
            self._kept.update(top.iter(*self.ignore))
        self._skip = self._kept.union(top.iter(*SKIP_TAGS))
        # a block inside content kept verbatim (an <svg>'s <title>) splits nothing around it
        hidden = {inner for node in self._skip for inner in node.iterdescendants()}
        holds = self._holds_block
        for block in top.iter(*BLOCK_TAGS):
            if block in hidden:
                continue
            for above in block.iterancestors():
                if above in holds:
                    break  # and so are all above it
                holds.add(above)

    def kept(self, node: Any) -> bool:
        """Whether `node` is kept verbatim, attributes included."""
        return node in self._kept

    def walk(self, container: Any) -> None:
        self._attributes(container)
        mixed: bool | None = None
        run: list[Any] = []
        after = None
        for child in container:
            if isinstance(child.tag, str) and mixed is None:
                mixed = _mixed(container)
            kind = self._kind(child, bool(mixed))
            if kind in (INLINE, VOID):
                run.append(child)
                continue
            lead = (container.text if after is None else after.tail) or ""
            if run or lead.strip():  # not whitespace between splitting elements alone
                self._flush(container, after, run, lead)
                run = []
            if kind == BLOCK:
                self.walk(child)
            else:
                self._void_attributes(child)
            after = child
        lead = (container.text if after is None else after.tail) or ""
        if run or lead.strip():
            self._flush(container, after, run, lead)

    def _kind(self, node: Any, mixed: bool) -> str:
        """How a child of a splitting element takes part in its text."""
        tag = node.tag
        if not isinstance(tag, str):
            return VOID  # comment, processing instruction, entity reference
        if self.xml:
            if not mixed:
                return SKIP if node in self._skip else BLOCK
            return self._in_flow(node)
        inline = tag not in BLOCK_TAGS and (
            tag in INLINE_TAGS or tag in VOID_TAGS or tag in SKIP_TAGS or mixed
        )
        if node in self._skip:
            return VOID if inline else SKIP
        if inline and tag not in VOID_TAGS and node in self._holds_block:
            inline = False
        return self._in_flow(node) if inline else BLOCK

    def _in_flow(self, node: Any) -> str:
        """INLINE (a paired marker) or VOID for a node inside a run."""
        flow = self._flow.get(node)
        if flow is None:
            tag = node.tag
            void = (
                not isinstance(tag, str)
                or node in self._skip
                or (not self.xml and tag in VOID_TAGS)
                or (not node.text and not len(node))
            )
            flow = self._flow[node] = VOID if void else INLINE
        return flow

    def _flush(
        self,
        container: Any,
        after: Any,
        run: list[Any],
        lead: str,
        at_start: bool | None = None,
    ) -> None:
        """The unit of `run`, the inline nodes after `after` in `container` (None: at its
        start), `lead` the text before them. `at_start`: whether the run starts a line, where
        a space renders as nothing (after a splitting element, at a block's start)."""
        if at_start is None:
            at_start = (
                after is not None
                or self.xml
                or container is self._top
                or container.tag in BLOCK_TAGS
            )
        # Void elements at the edges of a run stay where they are, outside the unit.
        while run and self._in_flow(run[0]) == VOID and not lead.strip():
            after = run.pop(0)
            self._void_attributes(after)
            lead = after.tail or ""
            at_start = False  # the element renders before the run: a space after it counts
        while run and self._in_flow(run[-1]) == VOID and not (run[-1].tail or "").strip():
            self._void_attributes(run.pop())
        if len(run) == 1 and self._in_flow(run[0]) == INLINE:
            only = run[0]
            if not lead.strip() and not (only.tail or "").strip():
                self._attributes(only)
                self._flush(only, None, list(only), only.text or "", at_start)
                return
        tokens: list[Token] = [("t", lead)]
        markers: dict[str, int] = {}
        for child in run:
            self._flatten(child, tokens, markers)
        unit, prefix, suffix = _unit(tokens, self._escape, at_start, container in self._preserved)
        if not unit:
            return
        self.units.append(unit)
        self.markers.append(tuple(markers))
        index = self.index
        self.slots.append(
            Run(
                index[container],
                None if after is None else index[after],
                tuple(index[c] for c in run),
                markers,
                prefix,
                suffix,
                tuple([t for t in tokens if t[0] != "t"]) if markers else (),
            )
        )

    def _flatten(self, node: Any, tokens: list[Token], markers: dict[str, int]) -> None:
        kind = self._in_flow(node)
        name = f"{'g' if kind == INLINE else 'x'}{len(markers) + 1}"
        markers[name] = self.index[node]
        if kind == VOID:
            tokens.append(("v", name))
            self._void_attributes(node)
        else:
            self._attributes(node)
            tokens.append(("o", name))
            tokens.append(("t", node.text or ""))
            for child in node:
                self._flatten(child, tokens, markers)
            tokens.append(("c", name))
        tokens.append(("t", node.tail or ""))

    def _void_attributes(self, node: Any) -> None:
        """The translatable attributes of an element kept whole."""
        if self.xml or not isinstance(node.tag, str) or node in self._kept:
            return
        if node.tag in SKIP_TAGS:  # <textarea placeholder>: its own attributes only
            self._attributes(node)
            return
        # <picture><img alt>: the alt is still text, but not inside a kept or opaque element
        below = [node]
        while below:
            inner = below.pop()
            self._attributes(inner)
            below.extend(
                c for c in reversed(inner) if isinstance(c.tag, str) and c not in self._skip
            )

    def _attributes(self, node: Any) -> None:
        if self.xml:
            return
        present = node.keys()
        tag = node.tag
        if _TRANSLATED.isdisjoint(present) and tag != "input" and tag != "meta":
            return  # none (the commonest), or none ever translated
        names = [a for a in ATTRIBUTES if a in present]
        if tag == "input" and (node.get("type") or "").strip().lower() in _BUTTONS:
            names.append("value")
        elif tag == "meta" and (node.get("name") or "").strip().lower() == "description":
            names.append("content")
        for name in names:
            value = node.get(name) or ""
            text = self._escape(_WS.sub(" ", value).strip(" "))
            if not has_letters(text):
                continue
            self.units.append(text)
            self.markers.append(())
            self.slots.append(Attribute(self.index[node], name, _leading(value), _trailing(value)))

    def _escape(self, text: str) -> str:
        """Text that reads as a marker (`&lt;g1&gt;` in the document) with its `<` stood for
        by `literal`; other text as it is."""
        if not reads_as_marker(text):
            return text
        if self.literal is None:
            self.literal = literal_lt(held_text(self._top))
            if self.literal is None:  # every candidate is in the document: read as markers
                self.literal = ""
        return escape_text(text, self.literal) if self.literal else text


def held_text(top: Any) -> str:
    """Every text and attribute value of the tree, references decoded: what a character our
    code stands in with must not be found in."""
    attributes = (v for node in top.iter() for v in node.attrib.values())
    return "".join(top.itertext()) + "".join(attributes)


def _unit(
    tokens: list[Token], escape: Callable[[str], str], at_start: bool = True, keep: bool = False
) -> tuple[str, str, str]:
    """The unit text (HTML whitespace collapsed, also across markers, unless `keep`), and the
    whitespace it had before and after, kept in place. Empty when the run has no letters.
    `at_start`: the run starts a line, where a leading space (inside its first inline
    element) renders as nothing; elsewhere (after an element kept outside the unit) it parts
    two words."""
    out: list[str] = []
    space = at_start
    letters = False
    first = True  # the run's leading text: its leading whitespace is kept outside the unit
    for kind, value in tokens:
        if kind == "t":
            if not value:
                continue
            if keep:  # xml:space="preserve": as it is, but for what is kept around the unit
                text = escape(value) if "<" in value else value
                text = text.lstrip(_SPACES) if first else text
                letters = letters or has_letters(text)
                out.append(text)
                first = False
                continue
            # a single space between printable characters is what most text holds
            text = value if value.isprintable() and "  " not in value else _WS.sub(" ", value)
            if "<" in text:
                text = escape(text)  # "&lt;g1&gt;" is text, not a marker
            if text[0] == " " and (space or first):
                space = True
                text = text[1:]
            if text:
                letters = letters or has_letters(text)
                space = text[-1] == " "
                out.append(text)
            first = False
        elif kind == "v":
            space = first = False
            out.append(f"<{value}/>")
        else:
            first = False
            out.append(f"<{value}>" if kind == "o" else f"</{value}>")
    if not letters:
        return "", "", ""
    # tokens start with the run's leading text and end with its last tail; the parser keeps a
    # form feed there that lxml refuses to be given back
    lead, trail = _leading(tokens[0][1]), _trailing(tokens[-1][1])
    unit = "".join(out).rstrip(_SPACES if keep else " ")
    return unit, lead.replace("\f", ""), trail.replace("\f", "")


def _leading(text: str) -> str:
    return text[: len(text) - len(text.lstrip(_SPACES))]


def _trailing(text: str) -> str:
    return text[len(text.rstrip(_SPACES)) :]


def _preserved(top: Any) -> set[Any]:
    """The elements whose whitespace `xml:space` says to keep: the attribute's value is
    inherited until an element inside sets it again."""
    keep: dict[Any, bool] = {}
    for node in top.iter("*"):
        value = node.get(_XML_SPACE)
        if value in ("preserve", "default"):
            keep[node] = value == "preserve"
        else:
            parent = node.getparent()
            keep[node] = keep.get(parent, False) if parent is not None else False
    return {node for node, kept in keep.items() if kept}


def _mixed(node: Any) -> bool:
    """Whether the element holds text of its own beside its children."""
    return bool((node.text or "").strip()) or any((c.tail or "").strip() for c in node)
