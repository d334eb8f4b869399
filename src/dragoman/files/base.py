"""What every format gives: a file read into segments, and put back together from their
translations."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal, Protocol, runtime_checkable

SegmentMarkup = Literal["xml", "html"]


@dataclass(frozen=True)
class Limits:
    """Bounds a reader checks before it reads: a hostile file is refused, never inflated."""

    max_bytes: int = 30 * 2**20
    """The upload's own size."""
    max_unpacked_bytes: int = 200 * 2**20
    """An archive's entries, uncompressed, summed from their headers and enforced as read."""
    max_entries: int = 5_000
    """An archive's entries."""
    max_segments: int = 100_000
    """Segments in one file."""


@dataclass(frozen=True)
class Segment:
    """One piece the engine translates. `markup` None: plain text. "xml": an XML fragment whose
    inline tags (`<g1>..</g1>`, `<x2/>`) stand for runs and fields; the translation must keep
    them, and the format maps them back."""

    text: str
    markup: SegmentMarkup | None = None


class Parsed(Protocol):
    """A file taken apart: its segments, in order, and how to write it back."""

    @property
    def segments(self) -> list[Segment]: ...

    def render(self, translated: list[str]) -> bytes:
        """The same file with each segment replaced by its translation (same order and count as
        `segments`; a segment's markup kept)."""
        ...


@runtime_checkable
class NamesLanguage(Protocol):
    """A parsed file that records its own language (gettext's `Language` header, XLIFF's
    target language): `render_in` also writes the target's code there. Apart from `Parsed`,
    so a format that has no such field implements only `render`."""

    def render_in(self, translated: list[str], target: str) -> bytes: ...


def render(parsed: Parsed, translated: list[str], target: str | None = None) -> bytes:
    """`parsed.render(translated)`; given the target language's code, a file that records its
    language says the target's."""
    if target is not None and isinstance(parsed, NamesLanguage):
        return parsed.render_in(translated, target)
    return parsed.render(translated)


@dataclass(frozen=True)
class FileFormat:
    name: str
    """Its short name ("docx", "srt"): DeepL's and LibreTranslate's format names."""
    extensions: tuple[str, ...]
    """Lower-case, with the dot: (".docx",)."""
    media_type: str
    read: Callable[[bytes, Limits], Parsed]
    """Raises BadFile for a file that is not what it claims, or past `Limits`."""
