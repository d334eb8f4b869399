"""SubRip subtitles (.srt): each cue's text one segment (a cue of several lines keeps its line
breaks); indices, timings and anything after a timing kept. Tags in a cue: `_cues`.

The file is cut into cues here, line by line, and written with the `srt` library: its own
parser's pattern takes quadratic time or worse on some texts (20 KB of spaces: 19 s), which an
upload must not be able to cost. Its leniencies are kept: no index, `.` for `,`, a blank line
inside a cue's text (a cue ends at a blank line followed by an index and a timing, or a
timing)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import timedelta

import srt

from dragoman.errors import BadFile
from dragoman.files.base import FileFormat, Limits, Segment
from dragoman.files.formats._cues import CueText, read_cue

_BOM = "\ufeff"
_INDEX = re.compile(r"\s*+(-?\d++)(?:\.\d*+)?\s*+")
_STAMP = r"\d++[,.:，．。：]\d++[,.:，．。：]\d++[,.:，．。：]\d*+"
_TIMING = re.compile(rf"\s*+({_STAMP}) *+-[ -] *+> *+({_STAMP}) ?+(.*+)")


@dataclass
class _Cue:
    sub: srt.Subtitle
    text: CueText | None


@dataclass
class _Srt:
    cues: list[_Cue]
    bom: bool
    eol: str

    @property
    def segments(self) -> list[Segment]:
        return [c.text.segment for c in self.cues if c.text is not None]

    def render(self, translated: list[str]) -> bytes:
        it = iter(translated)
        subs = []
        for c in self.cues:
            content = c.sub.content if c.text is None else c.text.render(next(it))
            subs.append(
                srt.Subtitle(c.sub.index, c.sub.start, c.sub.end, content, c.sub.proprietary)
            )
        body = srt.compose(subs, reindex=False, strict=True, eol=self.eol)
        return ((_BOM if self.bom else "") + body).encode()


def _timing(line: str, number: int) -> tuple[timedelta, timedelta, str]:
    m = _TIMING.fullmatch(line)
    if not m:
        raise BadFile(f"not a SubRip file: line {number} is no timing ('00:00:01,000 --> ...')")
    try:
        start, end = (srt.srt_timestamp_to_timedelta(m.group(i)) for i in (1, 2))
    except (ValueError, OverflowError):
        raise BadFile(f"not a SubRip file: line {number} holds an impossible time") from None
    return start, end, m.group(3)


def _starts_cue(lines: list[str], i: int) -> bool:
    """A cue starts at line i: an index and a timing, or a timing."""
    if _TIMING.fullmatch(lines[i]):
        return True
    return i + 1 < len(lines) and bool(_INDEX.fullmatch(lines[i])) and _starts_timing(lines, i + 1)


def _starts_timing(lines: list[str], i: int) -> bool:
    return i < len(lines) and bool(_TIMING.fullmatch(lines[i]))


def _read(data: bytes, limits: Limits) -> _Srt:
    try:
        body = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise BadFile(f"not UTF-8 text (byte {e.start})") from None
    bom = body.startswith(_BOM)
    eol = "\r\n" if "\r\n" in body else "\n"
    lines = body.removeprefix(_BOM).replace("\r\n", "\n").split("\n")
    cues: list[_Cue] = []
    segments = 0
    i = 0
    while i < len(lines):
        if not lines[i].strip():
            i += 1
            continue
        index = None
        m = _INDEX.fullmatch(lines[i])
        if m and _starts_timing(lines, i + 1):
            index = _number(m.group(1), i + 1)
            i += 1
        start, end, rest = _timing(lines[i], i + 1)
        i += 1
        text: list[str] = []
        while i < len(lines):
            if lines[i].strip():
                text.append(lines[i])
                i += 1
                continue
            # Blank lines end the cue if a cue (or the file's end) follows them.
            j = i
            while j < len(lines) and not lines[j].strip():
                j += 1
            if j == len(lines) or _starts_cue(lines, j):
                i = j
                break
            text += lines[i:j]
            i = j
        content = "\n".join(text).strip("\n")
        cue = read_cue(content, entities=False) if content.strip() else None
        segments += cue is not None
        if segments > limits.max_segments:
            raise BadFile(f"the file holds more than {limits.max_segments} cues")
        sub = srt.Subtitle(index if index is not None else len(cues) + 1, start, end, content, rest)
        cues.append(_Cue(sub, cue))
    if not cues:
        raise BadFile("not a SubRip file: it holds no cues")
    return _Srt(cues, bom, eol)


def _number(text: str, line: int) -> int:
    if len(text) > 18:
        raise BadFile(f"not a SubRip file: line {line} holds an impossible cue number")
    return int(text)


FORMAT = FileFormat("srt", (".srt",), "application/x-subrip; charset=utf-8", _read)
