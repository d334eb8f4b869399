"""Helpers for the office-format tests: fake translations that change a segment's text and move
or lose its markers as a model might, and a round trip through a format."""

from __future__ import annotations

import io
import re
import zipfile
from collections.abc import Callable

from dragoman.files.base import FileFormat, Limits, Parsed

# A marker, an escaped character, or text between them.
_TOKEN = re.compile(r"(<[^<>]*>|&[#\w]+;)|([^<&]+)")
_MARKER = re.compile(r"<(/?)([gx]\d+)(/?)>")

Translate = Callable[[str], str]


def shout(text: str) -> str:
    """Upper-case the text outside markers and escapes: a translation that keeps every marker."""
    return _TOKEN.sub(lambda m: m.group(1) or m.group(2).upper(), text)


def _top_level(text: str) -> list[str]:
    """The segment cut into its text and its outermost marker spans, in order."""
    chunks: list[str] = []
    depth = 0
    at = 0
    for m in _MARKER.finditer(text):
        closing, _, void = m.groups()
        if depth == 0 and m.start() > at:
            chunks.append(text[at : m.start()])
            at = m.start()
        if void:
            if depth == 0:
                chunks.append(m.group())
                at = m.end()
        elif closing:
            depth -= 1
            if depth == 0:
                chunks.append(text[at : m.end()])
                at = m.end()
        else:
            if depth == 0:
                at = m.start()
            depth += 1
    if at < len(text):
        chunks.append(text[at:])
    return chunks


def reverse(text: str) -> str:
    """Shouted, with its text and outermost markers in reverse order (a language whose word
    order puts the formatted words elsewhere)."""
    return "".join(reversed(_top_level(shout(text))))


def drop_markers(text: str) -> str:
    """Shouted, with every marker lost."""
    return _MARKER.sub("", shout(text))


def garble(text: str) -> str:
    """Shouted, each void marker written twice, a marker invented, the first pair's end lost."""
    out = _MARKER.sub(lambda m: m.group() * 2 if m.group(3) else m.group(), shout(text))
    out = re.sub(r"</g\d+>", "", out, count=1)
    return out + " <g99>MORE</g99>"


def round_trip(fmt: FileFormat, data: bytes, translate: Translate = shout) -> tuple[Parsed, bytes]:
    parsed = fmt.read(data, Limits())
    return parsed, parsed.render([translate(s.text) for s in parsed.segments])


def entries(data: bytes) -> dict[str, bytes]:
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        return {i.filename: zf.read(i) for i in zf.infolist()}


def rezip(data: bytes, changes: dict[str, bytes | None]) -> bytes:
    """The zip with some entries replaced, added, or (None) removed."""
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as src, zipfile.ZipFile(out, "w") as dst:
        for info in src.infolist():
            if info.filename in changes:
                body = changes.pop(info.filename)
                if body is not None:
                    dst.writestr(info, body)
            else:
                dst.writestr(info, src.read(info))
        for name, body in changes.items():
            if body is not None:
                dst.writestr(name, body, zipfile.ZIP_DEFLATED)
    return out.getvalue()


def has_lower_letters(text: str) -> bool:
    return any(c.islower() for c in text)
