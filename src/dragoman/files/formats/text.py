"""Plain text: the whole file one segment (the service cuts it into sentences and keeps its
layout). UTF-8, with or without a byte-order mark; a BOM is kept."""

from __future__ import annotations

from dataclasses import dataclass

from dragoman.errors import BadFile
from dragoman.files.base import FileFormat, Limits, Segment

_BOM = "\ufeff"


@dataclass
class _Text:
    body: str
    bom: bool

    @property
    def segments(self) -> list[Segment]:
        return [Segment(self.body)]

    def render(self, translated: list[str]) -> bytes:
        (text,) = translated
        return ((_BOM if self.bom else "") + text).encode()


def _read(data: bytes, limits: Limits) -> _Text:
    try:
        body = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise BadFile(f"not UTF-8 text (byte {e.start})") from None
    if "\x00" in body:
        raise BadFile("not a text file (it holds NUL bytes)")
    bom = body.startswith(_BOM)
    return _Text(body.removeprefix(_BOM), bom)


FORMAT = FileFormat("txt", (".txt",), "text/plain; charset=utf-8", _read)
