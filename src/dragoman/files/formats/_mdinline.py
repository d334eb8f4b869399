"""A Markdown paragraph's inline syntax the model must not touch, as markers: a link or an image
is `<gN>text</gN>` (its `[` and its `](destination "title")` or `][label]` kept aside: a relative
destination such as `docs/setup.md` is no URL the service would mask), a code span, an autolink,
an inline HTML tag and a hard line break `<xN/>`. Emphasis, which a model keeps, stays as it is
written.

One pass: brackets pair on a stack, a code span looks up its closing run among the runs of its
length found in advance, a destination its `)` among the parentheses paired in advance, a tag
or an autolink ends at the first `>` before any `<`."""

from __future__ import annotations

import re
from dataclasses import dataclass

from lxml import etree

from dragoman.files.inline import Item, Piece, Placed, Span, Void

_BACKTICKS = re.compile(r"`++")
# Characters XML cannot hold (a control character in a text file).
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
_MAX_DESTINATION = 2048  # characters; a longer "destination" is a `(` left open
_ANGLE = re.compile(r"<(?:[A-Za-z][A-Za-z0-9+.-]{1,31}:[^<>\s]*+|[A-Za-z/!?][^<>]*+)>")


@dataclass
class _Range:
    start: int
    end: int
    kind: str  # "link": a span; "void": kept whole
    text_start: int = 0
    text_end: int = 0


def items(text: str, keep: dict[Span | Void, tuple[str, str]]) -> list[Item]:
    """`text` as items; `keep` gets each span's (opening, closing) and each void's source."""
    top: list[Item] = []
    # (the items being filled, where their text ends, where their closing part ends)
    stack: list[tuple[list[Item], int, int]] = [(top, len(text), len(text))]
    at = 0
    for r in sorted(_ranges(text), key=lambda r: (r.start, -r.end)):
        while len(stack) > 1 and r.start >= stack[-1][1]:  # past the span being filled
            filled, text_end, end = stack.pop()
            _text(filled, text[at:text_end])
            at = end
        _text(stack[-1][0], text[at : r.start])
        if r.kind == "void":
            void = Void(etree.Element("md"))
            keep[void] = (text[r.start : r.end], "")
            stack[-1][0].append(void)
            at = r.end
        else:
            span = Span(None, None)
            keep[span] = (text[r.start : r.text_start], text[r.text_end : r.end])
            stack[-1][0].append(span)
            stack.append((span.items, r.text_end, r.end))
            at = r.text_start
    while len(stack) > 1:
        filled, text_end, end = stack.pop()
        _text(filled, text[at:text_end])
        at = end
    _text(top, text[at:])
    return top


def _text(items: list[Item], text: str) -> None:
    text = _NOT_XML.sub("", text)  # the service's XML parser would refuse the whole segment
    if text:
        if items and isinstance(items[-1], str):
            items[-1] += text
        else:
            items.append(text)


def _ranges(text: str) -> list[_Range]:
    runs: dict[int, list[int]] = {}
    for m in _BACKTICKS.finditer(text):
        runs.setdefault(len(m.group()), []).append(m.start())
    next_run = dict.fromkeys(runs, 0)
    parens = _parens(text)
    out: list[_Range] = []
    opens: list[int] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == "\\":
            i += 2
        elif c == "`":
            run = _BACKTICKS.match(text, i)
            k = len(run.group()) if run else 1
            close = _next_run(runs.get(k, []), next_run, k, i)
            if close is None:
                i += k
            else:
                out.append(_Range(i, close + k, "void"))
                i = close + k
        elif c == "<":
            tag = _ANGLE.match(text, i)
            if tag:
                out.append(_Range(i, tag.end(), "void"))
                i = tag.end()
            else:
                i += 1
        elif c == "\n":  # a hard break: a marker, since XML markup would make it a space
            out.append(_Range(i, i + 1, "void"))
            i += 1
        elif c == "[":
            opens.append(i)
            i += 1
        elif c == "]" and opens:
            start = opens.pop()
            end = _destination(text, i + 1, parens)
            if end is not None:
                image = start > 0 and text[start - 1] == "!" and not _escaped(text, start - 1)
                first = start - 1 if image else start
                out.append(_Range(first, end, "link", start + 1, i))
                if not image:
                    opens.clear()  # a link holds no link: the brackets before it are text
                i = end
            else:
                i += 1
        else:
            i += 1
    return out


def _escaped(text: str, i: int) -> bool:
    n = 0
    while i - n - 1 >= 0 and text[i - n - 1] == "\\":
        n += 1
    return n % 2 == 1


def _next_run(starts: list[int], cursor: dict[int, int], k: int, after: int) -> int | None:
    """The start of the next run of k backticks after `after` (each list walked once)."""
    j = cursor.get(k, 0)
    while j < len(starts) and starts[j] <= after:
        j += 1
    cursor[k] = j
    return starts[j] if j < len(starts) else None


def _parens(text: str) -> dict[int, int]:
    """Each `(`'s matching `)`, in one pass (a backslash escapes the next character)."""
    out: dict[int, int] = {}
    opened: list[int] = []
    i = 0
    while i < len(text):
        c = text[i]
        if c == "\\":
            i += 1
        elif c == "(":
            opened.append(i)
        elif c == ")" and opened:
            out[opened.pop()] = i
        i += 1
    return out


def _destination(text: str, i: int, parens: dict[int, int]) -> int | None:
    """Past `(destination "title")` or `[label]` at i; None when neither is there."""
    if text[i : i + 1] == "[":
        label = text.find("]", i + 1)
        return None if label == -1 or "[" in text[i + 1 : label] else label + 1
    end = parens.get(i)
    if end is None or end - i > _MAX_DESTINATION or "\n" in text[i:end]:
        return None
    return end + 1


def write(pieces: list[Piece], keep: dict[Span | Void, tuple[str, str]]) -> str:
    out: list[str] = []
    for piece in pieces:
        if isinstance(piece, str):
            out.append(piece)
        elif isinstance(piece, Placed):
            opening, closing = keep[piece.span]
            out += [opening, write(piece.pieces, keep), closing]
        else:
            out.append(keep[piece][0])
    return "".join(out)
