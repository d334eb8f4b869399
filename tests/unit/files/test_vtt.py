"""WebVTT: each cue's text translated, the header, STYLE, REGION and NOTE blocks, identifiers,
timings and cue settings kept, tags and character references kept as WebVTT writes them."""

from __future__ import annotations

import contextlib
import time
from pathlib import Path

import pytest
import webvtt

from dragoman.errors import BadFile
from dragoman.files import registry
from dragoman.files.base import Limits, Segment
from dragoman.files.formats import vtt
from tests.unit.files.textfakes import fuzz, translate

SAMPLE = (Path(__file__).parent / "samples" / "documentary.vtt").read_text()


def roundtrip(text: str) -> tuple[webvtt.WebVTT, webvtt.WebVTT, bytes]:
    parsed = vtt.FORMAT.read(text.encode(), Limits())
    out = parsed.render(translate(parsed))
    return webvtt.from_string(text), webvtt.from_string(out.decode().lstrip("\ufeff")), out


def test_vtt_segments_decode_references_and_show_tags_as_markers() -> None:
    parsed = vtt.FORMAT.read(SAMPLE.encode(), Limits())
    assert parsed.segments == [
        Segment("<g1>Welcome to the <g2>forest</g2>.</g1>", "xml"),
        Segment("Tom & Jerry <3\n- second line"),
        Segment("<g1>Birds</g1> sing at <x2/>dawn.", "xml"),
    ]


def test_vtt_translates_cues_and_keeps_everything_around_them() -> None:
    before, after, _ = roundtrip(SAMPLE)

    def frame(doc: webvtt.WebVTT) -> list[tuple[object, ...]]:
        return [(c.identifier, c.start, c.end, str(c.settings), c.comments) for c in doc.captions]

    assert frame(after) == frame(before)
    assert [c.raw_text for c in after.captions] == [
        "<v Narrator>WELCOME TO THE <c.yellow>FOREST</c>.</v>",
        "TOM &amp; JERRY &lt;3\n- SECOND LINE",
        "<i>BIRDS</i> SING AT <00:01:09.000>DAWN.",
    ]
    assert (after.header_text, after.metadata) == (before.header_text, before.metadata)
    assert [s.text for s in after.styles] == [s.text for s in before.styles]
    assert [list(r) for r in after.regions] == [list(r) for r in before.regions]
    assert after.header_comments == before.header_comments


def test_vtt_keeps_bom_and_crlf() -> None:
    data = ("\ufeff" + SAMPLE.replace("\n", "\r\n")).encode()
    parsed = vtt.FORMAT.read(data, Limits())
    out = parsed.render(translate(parsed))
    assert out.startswith("\ufeffWEBVTT".encode())
    assert b"\n" not in out.replace(b"\r\n", b"")


def test_vtt_blank_lines_in_a_translation_cannot_end_the_cue() -> None:
    parsed = vtt.FORMAT.read(b"WEBVTT\n\n00:01.000 --> 00:02.000\nOne\ntwo\n", Limits())
    out = parsed.render(["Un\n\n--> deux"]).decode()
    (cue,) = webvtt.from_string(out).captions
    assert cue.raw_text == "Un\n--&gt; deux"


def test_vtt_cue_without_letters_is_not_sent() -> None:
    data = "WEBVTT\n\n00:01.000 --> 00:02.000\n♪ ♪\n\n00:03.000 --> 00:04.000\nSing\n".encode()
    parsed = vtt.FORMAT.read(data, Limits())
    assert parsed.segments == [Segment("Sing")]
    assert [c.text for c in webvtt.from_string(parsed.render(["Chante"]).decode()).captions] == [
        "♪ ♪",
        "Chante",
    ]


def test_vtt_is_registered() -> None:
    assert registry.find("film.en.VTT") is vtt.FORMAT


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"1\n00:00:01,000 --> 00:00:02,000\nan srt file\n", "does not start with WEBVTT"),
        (b"WEBVTT\n\n00:01.000 --> 00:02.000\ncaf\xe9\n", "not UTF-8"),
        (b"", "does not start with WEBVTT"),
        (b"WEBVTT\x00\n", "NUL"),
    ],
)
def test_vtt_malformed_is_bad_file(data: bytes, message: str) -> None:
    with pytest.raises(BadFile, match=message):
        vtt.FORMAT.read(data, Limits())


def test_vtt_more_cues_than_the_limit_is_bad_file() -> None:
    data = ("WEBVTT\n\n" + "00:01.000 --> 00:02.000\nhello\n\n" * 6).encode()
    with pytest.raises(BadFile, match="more than 5 cues"):
        vtt.FORMAT.read(data, Limits(max_segments=5))


@pytest.mark.parametrize(
    "data",
    [
        b"WEBVTT\n" + b" " * 500_000,
        b"WEBVTT\n\n" + b"-->\n" * 50_000,
        b"WEBVTT\n\n00:01.000 --> 00:02.000\n" + b"<i" * 100_000 + b"\n",
        b"WEBVTT\n\n00:01.000 --> 00:02.000\n" + b"a <b>x</b> " * 20_000 + b"\n",
    ],
)
def test_vtt_hostile_texts_read_in_linear_time(data: bytes) -> None:
    started = time.perf_counter()
    with contextlib.suppress(BadFile):
        vtt.FORMAT.read(data, Limits())
    assert time.perf_counter() - started < 1.5


def test_vtt_reader_only_reads_or_refuses() -> None:
    fuzz(vtt.FORMAT.read, SAMPLE.encode())
