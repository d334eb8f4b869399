"""An attribute value whose quote is left open, which a browser and the parser read on over
the user's text after the tag:
- to the end of the text (`<p title="x>Hello world.</p><p>More text.</p>`): the tag is dropped
  with it, so the answer was empty (or cut there) with the user's text gone;
- to the next such quote, often the next attribute's (`<p title="x>Hello</p><p class="y">`,
  "Hello" read as the value) or an apostrophe (`<p title='x>Don't`): a value holding a `<`
  or `>` whose closing quote is followed by neither a space, `>` nor `/>` (HTML5's "missing
  whitespace between attributes": what a quote closed on purpose is followed by).
Such a text is refused, the quote's position named. A value that holds markup on purpose
(`data-content="<b>x</b>"`) is followed by a space or `>` and stays.

A tag the text ends inside with no `>` after its start (`<p>Hello <a href="x`, a page cut
short) hides nothing after it and is still dropped as a browser drops it."""

from __future__ import annotations

import re

from dragoman.errors import InvalidRequest
from dragoman.text.markup._tokens import SKIPPED

# A value's opening quote: after `=` and spaces.
_OPENS = re.compile(r"=[ \t\n\f\r]*+\Z")
# A tag's attributes as HTML5 reads them (`_tokens.ATTRIBUTES`), a value's quote left open
# running to the end of the text.
_ATTRIBUTES = r"""(?:[^>=]++|=\s*+(?:"[^"]*+"?|'[^']*+'?)?)*+"""
# What libxml2's tokenizer steps over (`_tokens.SKIPPED`): a quote in a comment, a script or
# another tag's closed value opens nothing.
_TOKENS = re.compile(rf"{SKIPPED}|(</?[a-zA-Z]{_ATTRIBUTES})>?", re.IGNORECASE | re.DOTALL)
_OPEN_VALUE = re.compile(r"""=\s*+(?:"[^"]*+"|'[^']*+'|(["']))""")
# A quoted value holding a `<` or `>`, its closing quote followed by what no closed value is.
_RAN_ON = r"""=[ \t\n\f\r]*+(?:("[^"<>]*+[<>][^"]*+")|('[^'<>]*+[<>][^']*+'))(?![\s>]|/>)"""
_MAY_RUN_ON = re.compile(_RAN_ON)
_RUNS_ON = re.compile(_RAN_ON + "(?=.)")  # a tag and the character after it: one follows


def check_open_quote(text: str) -> None:
    """Raise `InvalidRequest` when an attribute value's quote is left open over the text
    after the tag: to the end of `text`, or to a quote that closes it by chance."""
    at_end = _suspect(text) >= 0
    if not at_end and not _MAY_RUN_ON.search(text):
        return  # the commonest: tested without the tokenizer
    last = None
    for last in _TOKENS.finditer(text):
        tag = last.group(2)
        if tag is None:
            continue
        end = last.start() + len(tag)
        on = _RUNS_ON.search(text[last.start() : end + 1], 0)
        if on is not None:  # the value's closing quote, then what no closed value is
            group = on.lastindex or 1
            closed = last.start() + on.end(group) - 1
            where = _where(text, closed)
            _refuse(
                text,
                last.start() + on.start(group),
                f"is closed only by the quote at {where}: the text between would be read as "
                "that attribute's value and lost",
            )
    if not at_end or last is None or last.end() != len(text) or not last.group(2):
        return
    tag = last.group(2)
    opened = next((m for m in _OPEN_VALUE.finditer(tag) if m.group(1)), None)
    if opened is None or ">" not in tag[opened.end() :]:
        return  # cut inside a tag: nothing after it was text
    _refuse(
        text,
        last.start() + opened.start(1),
        "is never closed: the rest of the text would be read as that attribute's value and lost",
    )


def _where(text: str, at: int) -> str:
    """`at`'s place in `text` as "line 1, column 10" (characters, from 1)."""
    line = text.count("\n", 0, at) + 1
    return f"line {line}, column {at - (text.rfind(chr(10), 0, at) + 1) + 1}"


def _refuse(text: str, at: int, problem: str) -> None:
    raise InvalidRequest(
        f"Malformed HTML: the attribute value quote ({text[at]}) opened at {_where(text, at)} "
        f"{problem}"
    )


def _suspect(text: str) -> int:
    """Where the quote of a value left open at the end may open (the last `"` or `'`, after
    `=`, a `>` after it), else -1: the cheap test before the tokenizer's."""
    for quote in "\"'":
        at = text.rfind(quote)
        if at > 0 and _OPENS.search(text, max(0, at - 64), at) and ">" in text[at:]:
            return at
    return -1
