"""Markdown: paragraphs, headings and table cells translated, layout and everything else kept
as written, link destinations and code never shown to the model, and hostile texts read in
linear time."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from dragoman.errors import BadFile, FileTooLarge
from dragoman.files import registry
from dragoman.files.base import Limits, Segment
from dragoman.files.formats import markdown
from tests.unit.files.textfakes import fuzz, translate

GUIDE = (Path(__file__).parent / "samples" / "guide.md").read_text()


def blocks(text: str) -> list[tuple[str, str]]:
    """The block structure a Markdown reader sees: each block's type and markup."""
    md = MarkdownIt("commonmark").enable("table")
    return [(t.type, t.markup) for t in md.parse(text) if t.type != "inline"]


def test_markdown_segments_are_paragraphs_headings_and_cells() -> None:
    parsed = markdown.FORMAT.read(GUIDE.encode(), Limits())
    assert parsed.segments == [
        Segment("Getting *started*"),
        Segment(
            "Install the package with <x1/> and run it. Second line of para.<x2/>Hard break above.",
            "xml",
        ),
        Segment("A quote that spans two lines."),
        Segment("quoted item"),
        Segment("First item continues here"),
        Segment("Second <g1>link</g1> item", "xml"),
        Segment("nested ordered"),
        Segment("Setext heading"),
        Segment("Name"),
        Segment("Description"),
        Segment("The first"),
        Segment("b"),
        Segment("Second one"),
        Segment("See <g1>the guide</g1> and <x2/>.", "xml"),
    ]


def test_markdown_translated_keeps_layout_code_and_structure() -> None:
    parsed = markdown.FORMAT.read(GUIDE.encode(), Limits())
    out = parsed.render(translate(parsed)).decode()
    assert blocks(out) == blocks(GUIDE)
    lines = out.splitlines()
    assert lines[:4] == ["---", "title: Guide", "tags: [setup, install]", "---"]
    assert "# GETTING *STARTED*" in lines
    assert (
        "INSTALL THE PACKAGE WITH `pip install dragoman` AND RUN IT. SECOND LINE OF PARA.  "
        in lines
    )
    assert "HARD BREAK ABOVE." in lines
    assert "> A QUOTE THAT SPANS TWO LINES." in lines and "> - QUOTED ITEM" in lines
    assert '- SECOND [LINK](docs/guide.md "Guide") ITEM' in lines
    assert "  1. NESTED ORDERED" in lines
    assert lines[lines.index("SETEXT HEADING") :][:2] == ["SETEXT HEADING", "=============="]
    assert '```python\nprint("hello")\n```' in out
    assert "    indented code" in lines
    assert '<div class="note">\nRaw HTML block.\n</div>' in out
    assert "| NAME | DESCRIPTION |" in lines and "|------|-------------|" in lines
    assert "| `a`  | THE FIRST   |" in lines
    assert '[guide]: https://example.com/guide "The guide"' in lines
    assert "SEE [THE GUIDE][guide] AND <https://example.com>." in lines


def test_markdown_untranslated_render_is_the_file_itself() -> None:
    data = GUIDE.replace("\n", "\r\n").encode()
    parsed = markdown.FORMAT.read(data, Limits())
    assert parsed.render([s.text for s in parsed.segments]) == data


def test_markdown_pipe_in_a_translated_cell_is_escaped() -> None:
    parsed = markdown.FORMAT.read(b"| a |\n|---|\n| Yes or no |\n", Limits())
    out = parsed.render(["A", "Oui | non"]).decode()
    assert out.splitlines()[2] == "| Oui \\| non |"
    assert blocks(out) == blocks("| a |\n|---|\n| b |\n")


def test_markdown_lost_marker_keeps_the_link_destination() -> None:
    parsed = markdown.FORMAT.read(b"Read [the docs](../setup.md) first.\n", Limits())
    assert parsed.segments == [Segment("Read <g1>the docs</g1> first.", "xml")]
    out = parsed.render(["Lisez d'abord la documentation."]).decode()
    assert "](../setup.md)" in out and out.count("[") == 1


def test_markdown_translation_that_would_start_a_block_is_escaped() -> None:
    data = b"- Item one\n\nSome text\nwrapped.\n"
    parsed = markdown.FORMAT.read(data, Limits())
    out = parsed.render(["# Eins", "1. Text umbrochen."]).decode()
    assert out == "- \\# Eins\n\n1\\. Text umbrochen.\n"
    assert blocks(out) == blocks(data.decode())


def test_markdown_is_registered() -> None:
    assert registry.find("README.md") is markdown.FORMAT


@pytest.mark.parametrize(
    ("data", "message"),
    [(b"# Caf\xe9\n", "not UTF-8"), (b"# a\x00b\n", "NUL")],
)
def test_markdown_malformed_is_bad_file(data: bytes, message: str) -> None:
    with pytest.raises(BadFile, match=message):
        markdown.FORMAT.read(data, Limits())


def test_markdown_past_its_line_bound_is_too_large() -> None:
    with pytest.raises(FileTooLarge, match="up to 100000 lines"):
        markdown.FORMAT.read(b"a\n" * markdown.MAX_LINES, Limits())


def test_markdown_more_blocks_than_the_limit_is_bad_file() -> None:
    data = "".join(f"Paragraph {i}.\n\n" for i in range(11)).encode()
    with pytest.raises(BadFile, match="more than 10 blocks"):
        markdown.FORMAT.read(data, Limits(max_segments=10))


@pytest.mark.parametrize(
    "text",
    [
        "![" * 100_000,  # markdown-it's own inline rules take seconds on these
        "[a](" * 25_000,
        "[x](" + "a" * 3000 + " " + "[y](" * 10_000,
        "".join("`" * (i % 40 + 1) + "a" for i in range(20_000)),
        "<a " * 50_000,
        ">" * 100_000,
    ],
)
def test_markdown_hostile_texts_read_in_linear_time(text: str) -> None:
    started = time.perf_counter()
    parsed = markdown.FORMAT.read(text.encode(), Limits())
    parsed.render([s.text for s in parsed.segments])
    assert time.perf_counter() - started < 1.5


def test_markdown_reader_only_reads_or_refuses() -> None:
    fuzz(markdown.FORMAT.read, GUIDE.encode(), examples=60)


def test_a_lone_carriage_return_is_no_line_break_of_its_own() -> None:
    # markdown-it reads a lone CR as a line break; the reader's lines do not: "\r\x01" was two
    # lines to one and one to the other, and the reader crashed.
    for data in (b"\r\x01", b"# Title\rmore\n\nA paragraph.\n", b"a\rb\r\n\r\nc\r\n"):
        parsed = markdown.FORMAT.read(data, Limits())
        same = parsed.render([s.text for s in parsed.segments])
        assert same == data
