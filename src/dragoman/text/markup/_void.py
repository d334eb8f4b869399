"""HTML5 void elements libxml2's HTML parser does not know (`embed keygen source track wbr`).
It reads them as elements with content: what follows one became its content up to its
parent's end (`<p>Donau<wbr>dampf…</p>` sent the model only "Donau"), and it writes them with
an end tag (`</wbr>`). Each start tag is self-closed before parsing, as an HTML5 parser reads
it, and the end tags the serializer writes are taken out again."""

from __future__ import annotations

import re
from typing import Any

from dragoman.text.letters import unused_private_char
from dragoman.text.markup._tokens import ATTRIBUTES, SKIPPED

UNKNOWN_VOID = ("embed", "keygen", "source", "track", "wbr")
# The first letter spelt out: a case-blind search is then 7x quicker (11 us on a 10 KB page).
# It may find more (`<sbr`, `<embedded-x>`); `self_close` closes only these elements.
_MAY_HOLD = re.compile(r"<[eEkKsStTwW](?:mbed|eygen|ource|rack|br)", re.IGNORECASE)
# What `self_close` steps over, each to its end: what libxml2 reads as one token (a script's
# "<wbr>" is text, and so is one in a comment) and other start tags with their attributes
# (`title="<wbr>"`); and the void start tags it closes.
_TAGS = re.compile(
    rf"{SKIPPED}|(<(?:embed|keygen|source|track|wbr)(?=[\s/>]){ATTRIBUTES})>"
    rf"|<[a-zA-Z]{ATTRIBUTES}>?",
    re.IGNORECASE | re.DOTALL,
)


def may_hold(source: str) -> bool:
    """Whether `source` may hold one (a search of the text, quicker than one of the tree)."""
    return _MAY_HOLD.search(source) is not None


def self_close(source: str) -> str:
    """`source` with each such start tag self-closed (`<wbr>` as `<wbr />`): libxml2 honours
    `/>` on any element. A space before the slash: `<embed src=a/>` has the value `a/`."""

    def close(m: re.Match[str]) -> str:
        return m.group() if m.group(2) is None else f"{m.group(2)} />"

    return _TAGS.sub(close, source)


def end_mark(top: Any, taken: str) -> str:
    """A private-use character `taken` (the text and the document's texts) does not hold, or
    "" when the tree holds none of these elements (or `taken` holds every such character)."""
    if next(top.iter(*UNKNOWN_VOID), None) is None:
        return ""
    return unused_private_char(taken) or ""


def mark_ends(top: Any, mark: str) -> None:
    """Put `mark` in each empty such element, just before the end tag the serializer writes
    for it: `drop_ends` finds exactly those, never an end tag in a script or a comment."""
    for node in top.iter(*UNKNOWN_VOID):
        if node.text is None and not len(node):
            node.text = mark


def drop_ends(out: str, mark: str) -> str:
    return re.sub(f"{mark}</(?:embed|keygen|source|track|wbr)>", "", out)
