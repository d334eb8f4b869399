"""The supported formats, found by a file's name (the reader then checks its bytes)."""

from __future__ import annotations

from dragoman.errors import BadFile, FileTooLarge, UnsupportedFormat
from dragoman.files.base import FileFormat, Limits, Parsed
from dragoman.files.formats import (
    docx,
    epub,
    htmlpage,
    jsonres,
    markdown,
    odp,
    odt,
    po,
    pptx,
    srt,
    text,
    vtt,
    xliff,
    xlsx,
    yamlres,
)

FORMATS: tuple[FileFormat, ...] = (
    text.FORMAT,
    docx.FORMAT,
    pptx.FORMAT,
    xlsx.FORMAT,
    odt.FORMAT,
    odp.FORMAT,
    epub.FORMAT,
    srt.FORMAT,
    po.FORMAT,
    xliff.FORMAT,
    jsonres.FORMAT,
    vtt.FORMAT,
    yamlres.FORMAT,
    htmlpage.FORMAT,
    markdown.FORMAT,
)


def formats() -> list[FileFormat]:
    """Every supported format, by name."""
    return sorted(FORMATS, key=lambda f: f.name)


def supported() -> str:
    """The supported extensions, for an error message or a settings page."""
    return ", ".join(e for f in formats() for e in f.extensions)


def find(filename: str) -> FileFormat:
    """The format a file's name says (UnsupportedFormat naming the supported ones)."""
    lower = filename.lower()
    for fmt in formats():
        if lower.endswith(fmt.extensions):
            return fmt
    raise UnsupportedFormat(f"{filename!r}: not a supported file type; supported: {supported()}")


def read(filename: str, data: bytes, limits: Limits | None = None) -> tuple[FileFormat, Parsed]:
    """The file's format and its segments. Blocking (parsing): callers run it off the loop."""
    limits = limits or Limits()
    fmt = find(filename)
    if len(data) > limits.max_bytes:
        raise FileTooLarge(f"the file is {len(data)} bytes; the limit is {limits.max_bytes}")
    if not data:
        raise BadFile(f"{filename!r} is empty")
    parsed = fmt.read(data, limits)
    if len(parsed.segments) > limits.max_segments:
        raise BadFile(
            f"{filename!r} holds {len(parsed.segments)} segments; the limit is "
            f"{limits.max_segments}"
        )
    return fmt, parsed
