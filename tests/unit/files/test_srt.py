"""SubRip: each cue's text translated, indices, timings and their trailing settings kept, tags
kept as layout or as markers, and hostile files refused quickly."""

from __future__ import annotations

import contextlib
import time
from datetime import timedelta

import pytest
import srt as srtlib

from dragoman.errors import BadFile
from dragoman.files import registry
from dragoman.files.base import Limits, Segment
from dragoman.files.formats import srt
from tests.unit.files.textfakes import fuzz, translate

FILM = """1
00:00:01,000 --> 00:00:03,500
Hello, {name}!
How are you today?

2
00:00:04,000 --> 00:00:06,000 X1:100 X2:200
<i>I'm fine, thanks.</i>

3
00:00:07,000 --> 00:00:09,250
He said <b>no</b> & <i>walked
away quickly</i>.

4
00:00:10,000 --> 00:00:11,000
{\\an8}<font color="#ffff00">Read the sign</font>

5
00:00:12,000 --> 00:00:13,000
♪ ♪

6
00:00:14,000 --> 00:00:16,000
<i>First line in italics</i>
<i>second line too</i>
"""


def roundtrip(text: str) -> tuple[list[srtlib.Subtitle], list[srtlib.Subtitle], bytes]:
    parsed = srt.FORMAT.read(text.encode(), Limits())
    out = parsed.render(translate(parsed))
    return list(srtlib.parse(text)), list(srtlib.parse(out.decode())), out


def test_srt_translates_each_cue_and_keeps_indices_and_timings() -> None:
    before, after, _ = roundtrip(FILM)
    assert [(s.index, s.start, s.end, s.proprietary) for s in after] == [
        (s.index, s.start, s.end, s.proprietary) for s in before
    ]
    assert [s.content for s in after] == [
        "HELLO, {name}!\nHOW ARE YOU TODAY?",
        "<i>I'M FINE, THANKS.</i>",
        "HE SAID <b>NO</b> & <i>WALKED\nAWAY QUICKLY</i>.",
        '{\\an8}<font color="#ffff00">READ THE SIGN</font>',
        "♪ ♪",
        "<i>FIRST LINE IN ITALICS</i>\n<i>SECOND LINE TOO</i>",
    ]


def test_srt_segments_show_tags_only_as_markers() -> None:
    parsed = srt.FORMAT.read(FILM.encode(), Limits())
    assert parsed.segments == [
        Segment("Hello, {name}!\nHow are you today?"),
        Segment("I'm fine, thanks."),
        Segment("He said <g1>no</g1> &amp; <g2>walked<x3/>away quickly</g2>.", "xml"),
        Segment("Read the sign"),
        Segment("First line in italics\nsecond line too"),
    ]


def test_srt_tag_the_translation_lost_is_put_back_and_unknown_markers_dropped() -> None:
    data = b"1\n00:00:01,000 --> 00:00:02,000\nA {\\b1}bold<br/> word\n"
    parsed = srt.FORMAT.read(data, Limits())
    assert parsed.segments == [Segment("A <x1/>bold<x2/> word", "xml")]
    out = parsed.render(["UN <x1/>MOT <g7>GRAS</g7>"]).decode()
    (cue,) = srtlib.parse(out)
    content = cue.content
    assert content.startswith("UN {\\b1}MOT ")
    assert content.count("<br/>") == 1
    assert content.replace("<br/>", "") == "UN {\\b1}MOT GRAS"


def test_srt_control_characters_never_reach_an_xml_segment() -> None:
    data = b"1\n00:00:01,000 --> 00:00:02,000\nA <b>bold\x01</b> word\x0b\n"
    parsed = srt.FORMAT.read(data, Limits())
    assert parsed.segments == [Segment("A <g1>bold</g1> word", "xml")]
    (cue,) = srtlib.parse(parsed.render(translate(parsed)).decode())
    assert cue.content == "A <b>BOLD</b> WORD"


def test_srt_line_count_changed_keeps_leading_and_trailing_tags() -> None:
    parsed = srt.FORMAT.read(FILM.encode(), Limits())
    texts = [s.text for s in parsed.segments]
    texts[-1] = "One line now"
    out = parsed.render(texts).decode()
    assert list(srtlib.parse(out))[-1].content == "<i><i>One line now</i></i>"


def test_srt_keeps_bom_and_crlf() -> None:
    data = ("\ufeff" + FILM.replace("\n", "\r\n")).encode()
    parsed = srt.FORMAT.read(data, Limits())
    out = parsed.render(translate(parsed))
    assert out.startswith("\ufeff1\r\n".encode())
    assert b"\n" not in out.replace(b"\r\n", b"")
    assert len(list(srtlib.parse(out.decode().lstrip("\ufeff")))) == 6


def test_srt_without_indices_blank_line_inside_a_cue_and_dots() -> None:
    data = (
        "00:00:01.000 --> 00:00:02.000\nfirst part\n\nstill the first cue\n\n"
        "00:00:03.000 --> 00:00:04.000\nsecond\n"
    )
    parsed = srt.FORMAT.read(data.encode(), Limits())
    assert [s.text for s in parsed.segments] == ["first part\n\nstill the first cue", "second"]
    after = list(srtlib.parse(parsed.render(translate(parsed)).decode()))
    assert [(s.index, s.start, s.content) for s in after] == [
        (1, timedelta(seconds=1), "FIRST PART\nSTILL THE FIRST CUE"),
        (2, timedelta(seconds=3), "SECOND"),
    ]


def test_srt_is_registered() -> None:
    fmt, parsed = registry.read("Film.SRT", FILM.encode())
    assert fmt is srt.FORMAT
    assert len(parsed.segments) == 5


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"Hello there\n", "line 1 is no timing"),
        (b"\n\nWEBVTT\n\n00:01.000 --> 00:02.000\nhi\n", "line 3 is no timing"),
        (b"1\n99:99:99,999 --> 00:00:02,000\nok\n", None),
        (b"1\n00:00:01,000 --> 00:00:02,000\n\xff\xfe caf\xe9\n", "not UTF-8"),
        (b"\n\n  \n", "holds no cues"),
        ("1\n" + "9" * 5000 + ":00:00,000 --> 00:00:02,000\nx\n", "impossible time"),
    ],
)
def test_srt_malformed_is_bad_file(data: bytes | str, message: str | None) -> None:
    raw = data.encode() if isinstance(data, str) else data
    if message is None:  # a file the library reads too (an hour of 99 minutes is its business)
        assert srt.FORMAT.read(raw, Limits()).segments == [Segment("ok")]
        return
    with pytest.raises(BadFile, match=message):
        srt.FORMAT.read(raw, Limits())


def test_srt_more_cues_than_the_limit_is_bad_file() -> None:
    cues = "".join(f"{i}\n00:00:01,000 --> 00:00:02,000\nline {i}\n\n" for i in range(1, 12))
    with pytest.raises(BadFile, match="more than 10 cues"):
        srt.FORMAT.read(cues.encode(), Limits(max_segments=10))
    assert len(srt.FORMAT.read(cues.encode(), Limits(max_segments=11)).segments) == 11


@pytest.mark.parametrize(
    "data",
    [
        b" " * 200_000,  # the library's own parser takes minutes on this
        b"1\n00:00:01,000 --> 00:00:02,000\n" + (b"\n" * 50_000 + b"1" * 50_000 + b"\n") * 2,
        b"1\n00:00:01,000 --> 00:00:02,000\n" + b"<i" * 100_000,
    ],
)
def test_srt_hostile_texts_read_in_linear_time(data: bytes) -> None:
    started = time.perf_counter()
    with contextlib.suppress(BadFile):
        srt.FORMAT.read(data, Limits())
    assert time.perf_counter() - started < 1.0


def test_srt_reader_only_reads_or_refuses() -> None:
    fuzz(srt.FORMAT.read, FILM.encode())
