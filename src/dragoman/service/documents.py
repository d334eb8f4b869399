"""A text as the engine gets it: markup (HTML/XML) taken apart into blocks, each block cut into
sentences (with the layout kept aside), each sentence's placeholders masked. The engine
translates the units concurrently; `assemble` puts the answer back together and says what had
to be repaired (a lost placeholder, a dropped tag)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from dragoman.engine.protocol import ContextMode, Terms
from dragoman.text.markup import Markup, parse_html, parse_xml
from dragoman.text.markup.markers import spans
from dragoman.text.placeholders import Masked, mask
from dragoman.text.segment import Piece, SplitMode, join, split

MarkupKind = Literal["html", "xml"]


@dataclass(frozen=True)
class TextOptions:
    split: SplitMode = "1"
    """As DeepL's split_sentences: "1" sentences and newlines, "nonewlines", "0" none."""
    markup: MarkupKind | None = None
    ignore_tags: tuple[str, ...] = ()
    """Elements whose content is kept verbatim (DeepL's ignore_tags)."""
    glossary: Terms = ()
    """(source term, target term) pairs the model is asked to use."""
    context: ContextMode | None = None
    """Neighbours each sentence's prompt shows (None: the server's --sentence-context)."""


PLAIN = TextOptions()


@dataclass(frozen=True)
class Sizes:
    max_unit_chars: int
    """Longest piece sent as one engine request; longer sentences are cut."""
    min_split_chars: int
    """Texts up to this long with no newline stay whole."""


@dataclass
class Block:
    pieces: list[Piece]
    masks: list[Masked] = field(default_factory=list)

    def assemble(self, outs: list[str]) -> tuple[str, list[str]]:
        if len(outs) == 1 and len(self.pieces) == 1 and not self.masks[0].originals:
            piece = self.pieces[0]  # the commonest (a block of markup, a short text)
            return piece.lead + outs[0] + piece.trail, []
        repairs: list[str] = []
        texts = []
        for m, out in zip(self.masks, outs, strict=True):
            text, fixed = m.unmask(out)
            texts.append(text)
            repairs += fixed
        return join(self.pieces, texts), repairs


@dataclass
class Plan:
    blocks: list[Block]
    markup: Markup | None = None

    @property
    def units(self) -> list[str]:
        return [m.text for b in self.blocks for m in b.masks]

    def assemble(self, outs: list[str]) -> tuple[str, list[str]]:
        repairs: list[str] = []
        texts, at = [], 0
        for b in self.blocks:
            text, fixed = b.assemble(outs[at : at + len(b.masks)])
            at += len(b.masks)
            texts.append(text)
            repairs += fixed
        if self.markup is None:
            return texts[0], repairs
        rebuilt, fixed = self.markup.rebuild(texts)
        return rebuilt, repairs + fixed


def _block(
    text: str, language: str, options: TextOptions, sizes: Sizes, markers: bool = False
) -> Block:
    if markers and len(text) <= sizes.max_unit_chars:
        # A block with inline tags stays whole when it fits: its tags keep their context.
        core = text.strip()
        start = text.index(core[0]) if core else len(text)
        pieces = [Piece(text[:start], core, text[start + len(core) :])]
    else:
        pieces = split(text, language, options.split, sizes.max_unit_chars, sizes.min_split_chars)
        if markers:  # too long for one request: cut, but never inside a tag pair or a marker
            pieces = _tags_whole(text, pieces)
    markup = options.markup is not None  # its <g1> and <x2/> are markers, not the text's
    return Block(pieces, _masked([p.core for p in pieces if p.core], markup))


def _masked(cores: list[str], markup: bool) -> list[Masked]:
    """Each piece masked, a repeated piece once: a text of thousands of the same short
    sentence ("Go! Go! ...") costs one mask, not thousands (a Masked is immutable)."""
    seen: dict[str, Masked] = {}
    out = []
    for core in cores:
        m = seen.get(core)
        if m is None:
            m = seen[core] = mask(core, markup)
        out.append(m)
    return out


def _tags_whole(text: str, pieces: list[Piece]) -> list[Piece]:
    """The pieces of a block with inline markers (`text`, which they make up), joined again
    wherever the cut after one would part a `<gN>…</gN>` pair or cut a marker: each piece
    holds whole pairs (so a pair wider than `max_unit_chars` keeps its text in one piece)."""
    wholes = iter(spans(text))
    whole = next(wholes, None)
    out: list[Piece] = []
    at = 0  # where in `text` the cut after the current piece falls
    held = False  # whether that cut is inside a pair: the next piece joins this one
    for piece in pieces:
        if out and held:
            lead, core, trail = out[-1]
            out[-1] = Piece(lead, core + trail + piece.lead + piece.core, piece.trail)
        else:
            out.append(piece)
        at += len(piece.lead) + len(piece.core) + len(piece.trail)
        while whole is not None and whole[1] <= at:
            whole = next(wholes, None)
        held = whole is not None and whole[0] < at
    return out


def parse(text: str, kind: MarkupKind, ignore_tags: tuple[str, ...] = ()) -> Markup:
    """`text`'s markup taken apart: the same whatever its language (`plan` takes it)."""
    read = parse_html if kind == "html" else parse_xml
    return read(text, ignore_tags)


def plan(
    text: str, language: str, options: TextOptions, sizes: Sizes, markup: Markup | None = None
) -> Plan:
    """The units of `text` in `language` (the source, given or detected); `markup`: the text
    already parsed, else it is parsed here."""
    if options.markup is None:
        return Plan([_block(text, language, options, sizes)])
    if markup is None:
        markup = parse(text, options.markup, options.ignore_tags)
    blocks = [
        _block(u, language, options, sizes, bool(m))
        for u, m in zip(markup.units, markup.markers, strict=True)
    ]
    return Plan(blocks, markup)
