"""A fragment's own `<head>` and `<body>` tags, kept where the text has them. A fragment is
parsed inside a `<body>` of ours, where libxml2 drops a `<head>` or `<body>` tag with its
attributes (`<p>a</p><body class="x">` came back `<p>a</p>`) and, in a text that starts with
one, read as a document, put what follows `</body>` inside the body. Each is renamed to a
stand-in element before the parse and back after it: an element of the tree like any other,
written back where it stood, with its attributes and its end tag."""

from __future__ import annotations

import re
from typing import Any

from lxml import etree

from dragoman.text.markup._tokens import ATTRIBUTES, SKIPPED

_MAY_HOLD = re.compile(r"</?(?:head|body)[\s/>]", re.IGNORECASE)
# The text's own head and body tags, start or end, stepped over as libxml2's tokenizer reads
# them: one in a comment, in what it reads as one, a raw-text element or an attribute is none.
# `restore` finds the rest.
_TAGS = re.compile(
    rf"{SKIPPED}|</?(head|body)(?=[\s/>]){ATTRIBUTES}>?|<[a-zA-Z]{ATTRIBUTES}>?",
    re.IGNORECASE | re.DOTALL,
)
_TAKEN = re.compile(r"dragoman(\d*)-")
_NESTED = 16  # bodies inside bodies kept as written
# What a <head> holds (HTML's "in head" mode); anything else ends one left open.
_HEAD_CONTENT = frozenset(
    {
        "base",
        "basefont",
        "bgsound",
        "link",
        "meta",
        "noframes",
        "noscript",
        "script",
        "style",
        "template",
        "title",
    }
)
_SPACES = " \t\n\f\r"
_OPEN = "-open"  # a <head> the text does not close


def stand_in(source: str) -> tuple[str, str]:
    """`source` with its own head and body tags renamed (`<body class="x">` to
    `<dragoman-body class="x">`), and the stand-ins' prefix ("" when it has none). A head
    with no end tag of its own before the next head or the end is marked open; a head that
    starts while one is open ends that one first. A body inside an open one stays there as
    written when an end tag of its own closes it (up to `_NESTED` deep); else it is closed
    where it stands (`<body class="x" />`), as a browser merges it into the open one and goes
    on: nested, thousands went past the parser's depth, and an end tag put before it for the
    open one closed what the text holds open in it (a list went on outside its list)."""
    if not _MAY_HOLD.search(source):
        return source, ""
    found = [m for m in _TAGS.finditer(source) if m.group(2)]
    if not found:
        return source, ""
    # A prefix the text holds nowhere (the numbers taken found in one pass: a text of
    # thousands of them was searched once for each).
    taken = set(_TAKEN.findall(source.lower()))
    n = 0
    while (str(n) if n else "") in taken:
        n += 1
    prefix = f"dragoman{n or ''}-"
    names = [prefix + m.group(2).lower() for m in found]
    ends = [""] * len(found)  # an end tag put before each, for the head it finds open
    closed = [False] * len(found)  # a body closed where it starts
    head: int | None = None  # the index of the head open
    bodies: list[int] = []  # the bodies open, innermost last
    for i, m in enumerate(found):
        tag, closing = m.group(2).lower(), m.group().startswith("</")
        if tag == "body":
            if closing and bodies:
                bodies.pop()
            elif not closing and len(bodies) < _NESTED:
                bodies.append(i)
            elif not closing:
                closed[i] = True
        elif closing:
            head = None
        else:
            if head is not None:
                names[head] += _OPEN
                ends[i] = f"</{names[head]}>"
            head = i
    if head is not None:
        names[head] += _OPEN
    for i in bodies[1:]:  # left open inside another
        closed[i] = True
    out: list[str] = []
    at = 0
    for m, name, end, close in zip(found, names, ends, closed, strict=True):
        out += (source[at : m.start()], end, source[m.start() : m.start(2)], name)
        at = m.end(2)
        if close and m.group().endswith(">"):  # a space: `<body class=x/>` holds "x/"
            out += (source[at : m.end() - 1], " />")
            at = m.end()
    out.append(source[at:])
    return "".join(out), prefix


def restore(top: Any, prefix: str) -> bool:
    """The stand-ins in `top` named `head` and `body` again; a head the text left open ends
    where a browser ends it, before the first thing a head cannot hold. False, and none
    renamed, when a stand-in's name was read as anything but an element's (text, a comment,
    an attribute): the tags were not where `stand_in` read them."""
    if not prefix:
        return True
    if _READ_OTHERWISE(top, p=prefix):
        return False
    names = (prefix + "head", prefix + "head" + _OPEN, prefix + "body")
    for node in list(top.iter(*names)):
        if node.tag.endswith(_OPEN):
            _end(node)
        node.tag = node.tag[len(prefix) :].removesuffix(_OPEN)
    return True


# Anywhere a name put in by `stand_in` may be read but as an element's.
_READ_OTHERWISE = etree.XPath(
    "boolean(//text()[contains(., $p)] | //comment()[contains(., $p)]"
    " | //processing-instruction()[contains(., $p)]"
    " | //@*[contains(., $p) or contains(name(), $p)])"
)


def _end(head: Any) -> None:
    """`head`'s children from the first a head cannot hold (or text that is not space) on,
    moved after it."""
    text = None  # text that ends the head, moved out with what follows it
    keep = len(head)
    if head.text and head.text.strip(_SPACES):
        text, head.text, keep = head.text, None, 0
    else:
        for i, child in enumerate(head):
            if isinstance(child.tag, str) and child.tag.lower() not in _HEAD_CONTENT:
                keep = i
                break
            if child.tail and child.tail.strip(_SPACES):
                text, child.tail, keep = child.tail, None, i + 1
                break
    rest = head[keep:]
    if text is None and not rest:
        return
    tail, head.tail = head.tail, text
    for child in reversed(rest):  # with its tail; no search for the head's place (quadratic)
        head.addnext(child)
    if tail:
        last = rest[-1] if rest else head
        last.tail = (last.tail or "") + tail
