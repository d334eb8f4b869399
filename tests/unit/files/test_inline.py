"""Items to a segment and a translation back to pieces: markers numbered in order, text
escaped, and a translation that drops, repeats, invents or reorders markers taken without
losing an object."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lxml import etree

from dragoman.files.inline import Item, Piece, Placed, Span, Void, mark, place, unescape


def items() -> tuple[list[str | Span | Void], Span, Void, Void]:
    tab = Void(etree.Element("tab"))
    bold = Span(etree.Element("b"), None, ["bold <text>"])
    note = Void(etree.Element("note"))
    return ["Tom & Jerry ", bold, " then", tab, "after", note], bold, tab, note


def test_mark_numbers_markers_in_order_and_escapes_text() -> None:
    found, bold, tab, note = items()
    marked = mark(found)
    assert marked.text == "Tom &amp; Jerry <g1>bold &lt;text&gt;</g1> then<x2/>after<x3/>"
    assert marked.marks == {"g1": bold, "x2": tab, "x3": note}
    assert marked.plain == "Tom & Jerry bold <text> thenafter"
    assert marked.translatable


def test_nested_spans_numbered_outer_first() -> None:
    inner = Span(None, None, ["in"])
    outer = Span(None, None, ["a ", inner, Void(etree.Element("x"))])
    assert mark([outer]).text == "<g1>a <g2>in</g2><x3/></g1>"


@pytest.mark.parametrize("text", ["", "  \t", "12 345 €", "<>&"])
def test_no_letters_not_translatable(text: str) -> None:
    assert not mark([text, Void(etree.Element("x"))]).translatable


def test_place_follows_the_translation_order() -> None:
    found, bold, tab, note = items()
    pieces = place(mark(found), "<x3/>Avant<x2/> <g1>gras &lt;t&gt;</g1> Tom &amp; Jerry")
    assert pieces[0] is note and pieces[2] is tab
    assert pieces[1] == "Avant" and pieces[-1] == " Tom & Jerry"
    placed = pieces[4]
    assert isinstance(placed, Placed) and placed.span is bold and placed.pieces == ["gras <t>"]


def test_lost_markers_put_back_every_object_once() -> None:
    found, bold, tab, note = items()
    pieces = place(mark(found), "TOM &amp; JERRY BOLD TEXT THEN AFTER")
    objects = [p for p in pieces if isinstance(p, Void)]
    assert sorted(map(id, objects)) == sorted(map(id, [tab, note]))
    spans = [p for p in pieces if isinstance(p, Placed)]
    assert [s.span for s in spans] == [bold]
    text = "".join(
        p if isinstance(p, str) else "".join(map(str, p.pieces))
        for p in pieces
        if not isinstance(p, Void)
    )
    assert text == "TOM & JERRY BOLD TEXT THEN AFTER"


def test_repeated_and_invented_markers_keep_their_text_only() -> None:
    found, _, tab, note = items()
    reply = "<g1>A</g1> <g1>B</g1><x2/><x2/><x3/> <g7>C</g7> &lt;x9/&gt;"
    pieces = place(mark(found), reply)
    assert [p for p in pieces if isinstance(p, Void)] == [tab, note]
    assert sum(isinstance(p, Placed) for p in pieces) == 1
    assert "".join(p for p in pieces if isinstance(p, str)) == " B C <x9/>"


@pytest.mark.parametrize(
    ("escaped", "text"),
    [
        ("a &amp;amp; b", "a &amp; b"),
        ("&#65;&#x42;&quot;&apos;", "AB\"'"),
        ("bell\x07 &#1; nul", "bell  nul"),
        ("AT&T &copy", "AT&T &copy"),
        ("&#x110000;", ""),
    ],
)
def test_unescape(escaped: str, text: str) -> None:
    assert unescape(escaped) == text


def texts() -> st.SearchStrategy[str]:
    return st.text(st.sampled_from("ab <>&;#x1/g \n"), min_size=1, max_size=8)


def trees() -> st.SearchStrategy[list[Item]]:
    leaf = st.one_of(texts(), st.builds(lambda: Void(etree.Element("v"))))
    return st.recursive(
        st.lists(leaf, max_size=4),
        lambda inner: st.lists(
            st.one_of(leaf, st.builds(lambda xs: Span(etree.Element("s"), None, xs), inner)),
            max_size=4,
        ),
        max_leaves=12,
    )


def shape(parts: list[Item] | list[Piece]) -> list[object]:
    """Items or pieces as nested lists: text joined, a span by its element, a void by itself."""
    out: list[object] = []
    for p in parts:
        if isinstance(p, str):
            if out and isinstance(out[-1], str):
                out[-1] += p
            else:
                out.append(p)
        elif isinstance(p, Void):
            out.append(p)
        else:
            span, inner = (p.span, p.pieces) if isinstance(p, Placed) else (p, p.items)
            out.append((span.element, shape(inner)))
    return out


@settings(max_examples=60, deadline=None)
@given(trees())
def test_an_unchanged_translation_gives_back_the_items(found: list[Item]) -> None:
    marked = mark(found)
    assert shape(place(marked, marked.text)) == shape(found)


@settings(max_examples=60, deadline=None)
@given(trees(), st.sampled_from(["", "NEW TEXT", "<g1>A</g1><x1/><g1>B"]))
def test_any_reply_keeps_every_void_once(found: list[Item], reply: str) -> None:
    marked = mark(found)
    placed: list[Void] = []

    def walk(pieces: list[Piece]) -> None:
        for p in pieces:
            if isinstance(p, Void):
                placed.append(p)
            elif isinstance(p, Placed):
                walk(p.pieces)

    walk(place(marked, reply))
    voids = [m for m in marked.marks.values() if isinstance(m, Void)]
    assert sorted(map(id, placed)) == sorted(map(id, voids))
