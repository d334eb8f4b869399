"""WebVTT subtitles (.vtt), read and written with webvtt-py: each cue's text one segment (a cue
of several lines keeps its line breaks); the header and its metadata, STYLE, REGION and NOTE
blocks, cue identifiers, timings and cue settings kept. Tags and character references in a
cue: `_cues`. NOTE blocks are for the file's authors and stay as they are."""

from __future__ import annotations

from dataclasses import dataclass

import webvtt
from webvtt.errors import MalformedCaptionError, MalformedFileError

from dragoman.errors import BadFile
from dragoman.files.base import FileFormat, Limits, Segment
from dragoman.files.formats._cues import CueText, read_cue

_BOM = "\ufeff"


@dataclass
class _Vtt:
    doc: webvtt.WebVTT
    cues: list[tuple[webvtt.Caption, CueText]]
    bom: bool
    eol: str

    @property
    def segments(self) -> list[Segment]:
        return [cue.segment for _, cue in self.cues]

    def render(self, translated: list[str]) -> bytes:
        if len(translated) != len(self.cues):
            raise ValueError(f"{len(translated)} translations for {len(self.cues)} segments")
        originals = [caption.lines for caption, _ in self.cues]
        try:
            for (caption, cue), text in zip(self.cues, translated, strict=True):
                # A blank line would end the cue: a translation's are dropped.
                lines = [line for line in cue.render(text).split("\n") if line.strip()]
                caption.lines = lines or caption.lines
            body = self.doc.content
        finally:
            for (caption, _), lines in zip(self.cues, originals, strict=True):
                caption.lines = lines
        if self.eol != "\n":
            body = body.replace("\n", self.eol)
        return ((_BOM if self.bom else "") + body).encode()


def _read(data: bytes, limits: Limits) -> _Vtt:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise BadFile(f"not UTF-8 text (byte {e.start})") from None
    bom = text.startswith(_BOM)
    text = text.removeprefix(_BOM)
    if "\x00" in text:
        raise BadFile("not a WebVTT file (it holds NUL bytes)")
    try:
        doc = webvtt.from_string(text)
    except MalformedFileError:
        raise BadFile("not a WebVTT file: its first line does not start with WEBVTT") from None
    except MalformedCaptionError as e:
        raise BadFile(f"not a WebVTT file: {e}") from None
    cues = []
    for caption in doc.captions:
        cue = read_cue(caption.raw_text, entities=True)
        if cue is not None:
            cues.append((caption, cue))
        if len(cues) > limits.max_segments:
            raise BadFile(f"the file holds more than {limits.max_segments} cues")
    eol = "\r\n" if "\r\n" in text else "\n"
    return _Vtt(doc, cues, bom, eol)


FORMAT = FileFormat("vtt", (".vtt",), "text/vtt; charset=utf-8", _read)
