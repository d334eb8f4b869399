"""Inline markers: `<gN>…</gN>` stands for an inline element (`<b>`, `<a href>`), `<xN/>` for a
void or opaque one (`<br>`, `<img>`, `<code>` inside a sentence). The model sees only these; a
reply is checked against the markers its source held and, when it is wrong, repaired into a
well-nested tree holding every marker exactly once. The model gives no word alignment, so a lost
marker goes back around its source text if the reply still has it, else at the proportional
position; the tags are the guarantee, their exact place is best effort."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field

from dragoman.text.letters import unused_private_char

MARKER_HINT = (
    "The text contains markers like <g1>…</g1> and <x2/>: keep every marker exactly once, "
    "unchanged, around the words that correspond to the ones it wraps, and add no others."
)

# Lenient about what a model does to a marker: spaces, capitals, `<g1/>`, `</x2>`. Numbers of up
# to six digits: a 100,000-character block can hold over 10,000 elements.
# Possessive: a `<` before a long run of spaces is otherwise tried at every split of it.
_MARKER = re.compile(r"<\s*+(/?+)\s*+([gx])\s*+(\d{1,6}+)\s*+(/?+)\s*+>", re.IGNORECASE)
_SNAP = 16
"""How far (characters) a proportional position moves to reach a word boundary; beyond it
(scripts without spaces) the position stays where it fell."""


def literal_lt(text: str) -> str | None:
    """What stands for the `<` of document text that reads as a marker (`&lt;g1&gt;`,
    `&lt;x2/&gt;`): a private-use character `text` does not hold (None if none is left). The
    model sees the text, the marker parser does not take it for a marker, and the rebuilt
    document has its `<` back (`escape_text`, `unescape_text`)."""
    return unused_private_char(text)


def without_markers(text: str) -> str:
    """`text` with each marker a space: the words a reply or a unit holds."""
    return _MARKER.sub(" ", text) if "<" in text else text


def reads_as_marker(text: str) -> bool:
    return "<" in text and _MARKER.search(text) is not None


MAX_REPAIRED = 512
"""A wrong reply with more markers than this is not repaired (the repair's cost grows with
their square, and guessed spans nest as deep as there are markers): the unit's source is kept,
untranslated, and said so. Right replies are taken whatever their count."""

Token = tuple[str, str]
"""("t", text) | ("o", name) | ("c", name) | ("v", name)."""


@dataclass
class Node:
    """A paired (`gN`) or void (`xN`) marker in a rebuilt unit."""

    name: str
    content: list[str | Node] = field(default_factory=list)


Content = list[str | Node]


def tokenize(text: str) -> list[Token]:
    tokens: list[Token] = []
    # split gives the text before each marker, then the marker's four groups, ..., then the rest
    parts = _MARKER.split(text)
    for i in range(0, len(parts) - 1, 5):
        if parts[i]:
            tokens.append(("t", parts[i]))
        slash, letter, number, self_closing = parts[i + 1 : i + 5]
        name = f"{letter.lower()}{int(number)}"
        if name[0] == "x":
            if not slash:  # "</x2>" closes nothing: a void marker has no end
                tokens.append(("v", name))
        elif slash:
            tokens.append(("c", name))
        else:
            tokens.append(("o", name))
            if self_closing:
                tokens.append(("c", name))
    if parts[-1]:
        tokens.append(("t", parts[-1]))
    return tokens


def spans(text: str) -> list[tuple[int, int]]:
    """Where in a unit (well-nested markers, as the extractor writes them) a cut would part a
    `<gN>…</gN>` pair or cut a marker: (start, end) of each outermost pair and each void
    marker outside a pair, in order."""
    out: list[tuple[int, int]] = []
    depth, start = 0, 0
    for m in _MARKER.finditer(text):
        closing, letter = m.group(1), m.group(2).lower()
        if letter == "x" or m.group(4):  # void, or a pair written as one tag
            if not depth:
                out.append(m.span())
        elif not closing:
            if not depth:
                start = m.start()
            depth += 1
        elif depth:
            depth -= 1
            if not depth:
                out.append((start, m.end()))
    return out


def escape_text(text: str, literal: str) -> str:
    """Document text with the `<` of every marker lookalike replaced by `literal`."""
    return _MARKER.sub(lambda m: literal + m.group()[1:], text)


def unescape_text(text: str, literal: str | None) -> str:
    return text.replace(literal, "<") if literal and literal in text else text


def plain(text: str) -> str:
    """The text with every marker removed."""
    return _MARKER.sub("", text)


def validate(reply: str, expected_ids: Collection[str]) -> list[str]:
    """What is wrong with the markers of `reply` given the marker names its source held
    (`"g1"`, `"x2"`, ...): each problem is "<kind> <name>", kind one of missing, duplicated,
    invented, unclosed, unopened, misnested. Empty when the reply can be rebuilt as it is."""
    return _check(tokenize(reply), expected_ids)


def _check(tokens: list[Token], expected: Collection[str]) -> list[str]:
    if len(expected) > 16:  # `in` below, once per marker
        expected = frozenset(expected)
    marks = [(k, n) for k, n in tokens if k != "t"]
    # An `xN` can only be ("v", xN) and a `gN` ("o", gN) or ("c", gN): as many distinct
    # marks as that allows, all expected, is each expected marker exactly once.
    allowed = len(expected) + sum(1 for n in expected if n[0] == "g")
    if (
        len(marks) == allowed
        and len(set(marks)) == allowed
        and all(n in expected for _, n in marks)
    ):
        return _nesting(marks)
    counts: Counter[tuple[str, str]] = Counter(marks)
    names = _unique(n for _, n in marks)
    problems = [f"invented {n}" for n in names if n not in expected]
    for name in sorted(expected, key=_number):
        if name[0] == "x":
            n = counts["v", name]
            if n != 1:
                problems.append(f"{'missing' if n == 0 else 'duplicated'} {name}")
            continue
        opened, closed = counts["o", name], counts["c", name]
        if opened > 1 or closed > 1:
            problems.append(f"duplicated {name}")
        elif not opened and not closed:
            problems.append(f"missing {name}")
        elif not closed:
            problems.append(f"unclosed {name}")
        elif not opened:
            problems.append(f"unopened {name}")
    return problems or _nesting(marks)


def _nesting(marks: list[Token]) -> list[str]:
    """The first misnested marker, as `_check` reports it (empty when well nested)."""
    stack: list[str] = []
    for kind, name in marks:
        if kind == "o":
            stack.append(name)
        elif kind == "c":
            if not stack or stack[-1] != name:
                return [f"misnested {name}"]
            stack.pop()
    return []


def to_content(source: str, reply: str, expected: Collection[str]) -> tuple[Content, list[str]]:
    """The reply as a tree of text and markers holding each expected marker exactly once, and
    the problems repaired to get there (empty when the reply was right)."""
    if not expected and "<" not in reply:
        return [reply], []
    tokens = tokenize(reply)
    problems = _check(tokens, expected)
    if not problems:
        return _tree(tokens), []
    if len(expected) > MAX_REPAIRED:
        kept = f"unrepairable: {len(expected)} markers, over {MAX_REPAIRED}; kept untranslated"
        return _tree(tokenize(source)), [kept]
    return _repair(source, tokens, expected), problems


def _tree(tokens: list[Token]) -> Content:
    root: Content = []
    stack = [root]
    for kind, value in tokens:
        if kind == "t":
            stack[-1].append(value)
        elif kind == "v":
            stack[-1].append(Node(value))
        elif kind == "o":
            node = Node(value)
            stack[-1].append(node)
            stack.append(node.content)
        else:
            stack.pop()
    return root


@dataclass
class _Span:
    start: int
    end: int
    name: str
    children: list[_Span] = field(default_factory=list)

    @property
    def void(self) -> bool:
        return self.name[0] == "x"


def _positions(tokens: list[Token]) -> tuple[str, dict[str, list[int]]]:
    """Plain text, and where in it each marker token stands ("o g1", "c g1", "v x2")."""
    text: list[str] = []
    at: dict[str, list[int]] = {}
    offset = 0
    for kind, value in tokens:
        if kind == "t":
            text.append(value)
            offset += len(value)
        else:
            at.setdefault(f"{kind} {value}", []).append(offset)
    return "".join(text), at


def _repair(source: str, tokens: list[Token], expected: Collection[str]) -> Content:
    text, at = _positions(tokens)
    src_text, src_at = _positions(tokenize(source))
    scale = len(text) / len(src_text) if src_text else 0.0

    def scaled(offset: int) -> int:
        return min(len(text), round(offset * scale))

    spans: dict[str, _Span] = {}
    guessed: set[str] = set()  # placed by the repair, not (wholly) by the reply
    for name in sorted(expected, key=_number):
        if name[0] == "x":
            found = at.get(f"v {name}")
            p = found[0] if found else _snap(text, scaled(src_at[f"v {name}"][0]), start=True)
            spans[name] = _Span(p, p, name)
            continue
        s0, e0 = src_at[f"o {name}"][0], src_at[f"c {name}"][0]
        opens, closes = at.get(f"o {name}", []), at.get(f"c {name}", [])
        if opens and closes:
            start = opens[0]
            end = next((c for c in closes if c >= start), closes[0])
            start, end = min(start, end), max(start, end)
        elif opens:
            start = opens[0]
            end = max(start, _snap(text, min(len(text), start + scaled(e0 - s0)), start=False))
        elif closes:
            end = closes[0]
            start = min(end, _snap(text, max(0, end - scaled(e0 - s0)), start=True))
        else:
            start, end = _find(text, src_text[s0:e0]) or (
                _snap(text, scaled(s0), start=True),
                _snap(text, scaled(e0), start=False),
            )
            end = max(start, end)
        if not (opens and closes):
            guessed.add(name)
        spans[name] = _Span(start, end, name)
    # A guessed span still holds what it held in the source (innermost first).
    for child, parent in reversed(_parents(source).items()):
        if parent in guessed and child in spans and parent in spans:
            outer, inner = spans[parent], spans[child]
            outer.start, outer.end = min(outer.start, inner.start), max(outer.end, inner.end)
    return _content(text, _laminate(list(spans.values()), len(text)))


def _parents(source: str) -> dict[str, str]:
    """Each marker's enclosing paired marker in the source, in source order."""
    parents: dict[str, str] = {}
    stack: list[str] = []
    for kind, name in tokenize(source):
        if kind in ("o", "v") and stack:
            parents[name] = stack[-1]
        if kind == "o":
            stack.append(name)
        elif kind == "c" and stack:
            stack.pop()
    return parents


def _laminate(spans: list[_Span], length: int) -> _Span:
    """Nest the spans into one tree. Equal spans nest as in the source (a lower number is an
    outer element); a span crossing its parent's end is cut there; a void marker goes into the
    innermost span that strictly contains its position."""
    root = _Span(0, length, "")
    stack = [root]
    paired = [s for s in spans if not s.void]
    for span in sorted(paired, key=lambda s: (s.start, -s.end, _number(s.name))):
        while len(stack) > 1 and span.start >= stack[-1].end:
            stack.pop()
        span.end = min(span.end, stack[-1].end)
        stack[-1].children.append(span)
        stack.append(span)
    for point in (s for s in spans if s.void):
        parent = root
        while inner := next(
            (c for c in parent.children if not c.void and c.start < point.start < c.end), None
        ):
            parent = inner
        parent.children.append(point)
    return root


def _content(text: str, span: _Span) -> Content:
    out: Content = []
    cursor = span.start
    for child in sorted(span.children, key=lambda c: (c.start, not c.void)):
        if child.start > cursor:
            out.append(text[cursor : child.start])
        node = Node(child.name)
        if not child.void:
            node.content = _content(text, child)
        out.append(node)
        cursor = max(cursor, child.end)
    if span.end > cursor:
        out.append(text[cursor : span.end])
    return out


def _find(text: str, wanted: str) -> tuple[int, int] | None:
    """Where the source text of a marker stands in the reply (names, numbers, terms the model
    kept), exact first, then ignoring case."""
    wanted = wanted.strip()
    if not wanted:
        return None
    i = text.find(wanted)
    if i < 0 and len(text.lower()) == len(text):
        i = text.lower().find(wanted.lower())
    return (i, i + len(wanted)) if i >= 0 else None


def _snap(text: str, p: int, *, start: bool) -> int:
    """The nearest word start (or end) to `p`, within a few characters."""

    def boundary(k: int) -> bool:
        if start:
            return k == 0 or (k < len(text) and text[k - 1].isspace() and not text[k].isspace())
        return k == len(text) or (k > 0 and text[k].isspace() and not text[k - 1].isspace())

    for d in range(_SNAP + 1):
        for k in (p - d, p + d):
            if 0 <= k <= len(text) and boundary(k):
                return k
    return p


def _number(name: str) -> int:
    return int(name[1:])


def _unique(names: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(names))
