"""Markdown (.md): each paragraph, heading and table cell one segment; everything else kept as
written: front matter, fenced and indented code, HTML blocks, rules, a table's separator row,
link reference definitions, and each line's layout (a heading's `#`, a list item's marker, a
quote's `>`, indentation), which is never sent.

Blocks are found by markdown-it-py's line maps (CommonMark with tables). A paragraph's soft
line breaks are spaces in its segment, so a sentence wrapped over lines is translated whole; its
translation is one line (a hard break starts another, with the block's prefix). Inline syntax
the model must not touch (link destinations, code spans, autolinks, inline HTML) is markers:
`_mdinline`."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from markdown_it import MarkdownIt
from markdown_it.token import Token

from dragoman.errors import BadFile, FileTooLarge
from dragoman.files.base import FileFormat, Limits, Segment
from dragoman.files.formats import _mdinline
from dragoman.files.inline import Marked, Span, Void, mark, place

# markdown-it-py reads some 50,000 lines a second at worst (a paragraph of one-letter lines).
MAX_LINES = 100_000
_FRONT_OPEN = re.compile(r"---[ \t]*+")
_FRONT_CLOSE = re.compile(r"(?:---|\.\.\.)[ \t]*+")
_NOT_QUOTE = re.compile(r"[^>\s]")
_PIPE = re.compile(r"(?<!\\)\|")
# What starts a block at a line's start: an ordered item's number, an ATX heading, a bullet, a
# quote, a setext underline or a rule, a fence.
_STARTS_BLOCK = re.compile(
    r"(\d{1,9})[.)](?:\s|$)|#{1,6}(?:\s|$)|[-+*](?:\s|$)|>|=+\s*$"
    r"|[-*_](?:[ \t]*[-*_]){2,}[ \t]*$|`{3}|~{3}"
)


@dataclass
class _Text:
    """A stretch of inline Markdown as a segment, and its translation back."""

    segment: Segment
    marked: Marked | None = None
    keep: dict[Span | Void, tuple[str, str]] = field(default_factory=dict)

    def back(self, translated: str) -> str:
        if self.marked is None:
            return translated
        return _mdinline.write(place(self.marked, translated), self.keep)


@dataclass
class _Block:
    """A paragraph or heading on lines [start, end)."""

    start: int
    end: int
    text: _Text
    lead: str
    """The first line's prefix (`# `, `- `, `> `, indentation)."""
    cont: str
    """A further line's prefix."""
    trail: str
    """After the last line's text (an ATX heading's closing `#`s)."""
    hard_break: str
    """What ends a line before a hard break: two spaces or a backslash."""

    def lines(self, translated: str) -> list[str]:
        parts = [_guard(p) for p in self.text.back(translated).split("\n")]
        out = [self.lead + parts[0]] + [self.cont + p for p in parts[1:]]
        out = [line + self.hard_break for line in out[:-1]] + [out[-1] + self.trail]
        return out


def _guard(text: str) -> str:
    """A translated line that would start a heading, list, quote or code block escaped."""
    text = text.lstrip()
    m = _STARTS_BLOCK.match(text)
    if m is None:
        return text
    if m.group(1):  # `1.` -> `1\.`
        return text[: m.end(1)] + "\\" + text[m.end(1) :]
    return "\\" + text


@dataclass
class _Cell:
    line: int
    start: int
    end: int
    text: _Text


@dataclass
class _Markdown:
    lines: list[str]
    eol: str
    blocks: list[_Block]
    cells: list[_Cell]
    order: list[_Block | _Cell]
    """Blocks and cells in document order: the segments' order."""

    @property
    def segments(self) -> list[Segment]:
        return [item.text.segment for item in self.order]

    def render(self, translated: list[str]) -> bytes:
        if len(translated) != len(self.order):
            raise ValueError(f"{len(translated)} translations for {len(self.order)} segments")
        lines: list[str | list[str]] = list(self.lines)
        done = dict(zip(map(id, self.order), translated, strict=True))
        for cell in sorted(self.cells, key=lambda c: (c.line, -c.start)):
            if done[id(cell)] == cell.text.segment.text:
                continue  # as written
            text = cell.text.back(done[id(cell)]).replace("\n", " ")
            line = lines[cell.line]
            assert isinstance(line, str)
            lines[cell.line] = line[: cell.start] + _PIPE.sub(r"\\|", text) + line[cell.end :]
        for block in self.blocks:
            if done[id(block)] == block.text.segment.text:
                continue  # as written, its line wrapping included
            lines[block.start] = block.lines(done[id(block)])
            for i in range(block.start + 1, block.end):
                lines[i] = []
        flat = [x for line in lines for x in ([line] if isinstance(line, str) else line)]
        return self.eol.join(flat).encode()


def _front_matter(lines: list[str]) -> int:
    """The number of lines a front matter block (`---` ... `---`) takes at the start."""
    if not lines or not _FRONT_OPEN.fullmatch(lines[0]):
        return 0
    for i in range(1, len(lines)):
        if _FRONT_CLOSE.fullmatch(lines[i]):
            return i + 1
    return 0


def _inline(text: str) -> _Text | None:
    """A stretch of inline Markdown as a segment; None when it holds no words."""
    keep: dict[Span | Void, tuple[str, str]] = {}
    marked = mark(_mdinline.items(text, keep))
    if not marked.translatable:
        return None
    if not marked.marks:
        return _Text(Segment(text))
    return _Text(Segment(marked.text, "xml"), marked, keep)


def _block(token: Token, lines: list[str]) -> _Block | None:
    """A paragraph's or heading's inline token as a block; None when its lines cannot be told
    apart from their layout (then it is kept as written)."""
    assert token.map is not None
    start, end = token.map
    content = token.content.split("\n")
    if len(content) != end - start or not all(content) or end > len(lines):
        return None
    prefixes, suffixes = [], []
    for line, words in zip(lines[start:end], content, strict=True):
        at = line.rfind(words)
        if at < 0:
            return None
        prefixes.append(line[:at])
        suffixes.append(line[at + len(words) :])
    joined, hard_break = content[0], ""
    for i in range(1, len(content)):
        before = content[i - 1] + suffixes[i - 1]
        if before.endswith(("  ", "\\")):
            hard_break = hard_break or ("\\" if before.endswith("\\") else "  ")
            joined = joined.rstrip(" ").removesuffix("\\") + "\n" + content[i]
        else:
            joined += " " + content[i]
    text = _inline(joined)
    if text is None:
        return None
    cont = prefixes[1] if len(prefixes) > 1 else _NOT_QUOTE.sub(" ", prefixes[0])
    return _Block(start, end, text, prefixes[0], cont, suffixes[-1], hard_break)


def _read(data: bytes, limits: Limits) -> _Markdown:
    try:
        source = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise BadFile(f"not UTF-8 text (byte {e.start})") from None
    if "\x00" in source:
        raise BadFile("not a Markdown file (it holds NUL bytes)")
    eol = "\r\n" if "\r\n" in source else "\n"
    lines = source.replace("\r\n", "\n").split("\n")
    if len(lines) > MAX_LINES:
        raise FileTooLarge(
            f"a Markdown file may have up to {MAX_LINES} lines; this one has {len(lines)}"
        )
    front = _front_matter(lines)
    # Front matter parsed as blank lines: the line numbers stay the file's. A lone CR, which
    # markdown-it reads as a line break, is a space to it: its line numbers are those of
    # `lines` (a line of "\r\x01" was two to it, one here: a crash, not a 4xx). Such a line's
    # words then differ from the parse's and it is kept as written.
    body = "\n".join([""] * front + lines[front:]).replace("\r", " ")
    md = MarkdownIt("commonmark", {"maxNesting": 20}).enable("table")
    # Blocks only: a paragraph's inline source is all that is needed, and markdown-it's inline
    # rules take seconds on some texts (200 KB of `![`: 8 s).
    md.core.ruler.disable("inline")
    tokens = md.parse(body)
    blocks: list[_Block] = []
    cells: list[_Cell] = []
    order: list[_Block | _Cell] = []
    row_at: dict[int, int] = {}
    in_cell = False
    for token in tokens:
        if token.type in ("th_open", "td_open"):
            in_cell = True
            continue
        if token.type != "inline" or token.map is None:
            continue
        item: _Block | _Cell | None
        if in_cell:
            in_cell = False
            item = _cell(token, lines, row_at)
            if item is not None:
                cells.append(item)
        else:
            item = _block(token, lines)
            if item is not None:
                blocks.append(item)
        if item is not None:
            order.append(item)
            if len(order) > limits.max_segments:
                raise BadFile(f"the file holds more than {limits.max_segments} blocks")
    return _Markdown(lines, eol, blocks, cells, order)


def _cell(token: Token, lines: list[str], row_at: dict[int, int]) -> _Cell | None:
    """A table cell: found in its row's line after the cells before it."""
    assert token.map is not None
    row = token.map[0]
    at = lines[row].find(token.content, row_at.get(row, 0)) if token.content else -1
    if at < 0:
        return None
    row_at[row] = at + len(token.content)
    text = _inline(token.content)
    return None if text is None else _Cell(row, at, at + len(token.content), text)


FORMAT = FileFormat("markdown", (".md", ".markdown"), "text/markdown; charset=utf-8", _read)
