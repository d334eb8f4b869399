"""Readers on mutated files: a damaged archive or damaged XML inside a valid one is refused with
BadFile or read; nothing else comes out, and what reads also writes back."""

from __future__ import annotations

from collections.abc import Callable
from functools import cache

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dragoman.errors import BadFile
from dragoman.files.base import FileFormat, Limits
from dragoman.files.formats import docx as docx_format
from dragoman.files.formats import epub as epub_format
from dragoman.files.formats import pptx as pptx_format
from tests.unit.files import test_docx, test_epub, test_pptx
from tests.unit.files.office import entries, rezip, shout

# (format, a valid file of it, the part whose XML is mutated)
SAMPLES: dict[str, tuple[FileFormat, Callable[[], bytes], str]] = {
    "docx": (docx_format.FORMAT, test_docx.build, "word/document.xml"),
    "pptx": (pptx_format.FORMAT, test_pptx.build, "ppt/slides/slide2.xml"),
    "epub": (epub_format.FORMAT, test_epub.build, "OEBPS/text/chapter 1.xhtml"),
}


@cache
def sample(name: str) -> bytes:
    return SAMPLES[name][1]()


@st.composite
def mutations(draw: st.DrawFn, size: int) -> list[tuple[int, int]]:
    """A few (position, byte) overwrites."""
    count = draw(st.integers(1, 8))
    return [(draw(st.integers(0, size - 1)), draw(st.integers(0, 255))) for _ in range(count)]


def mutate(data: bytes, changes: list[tuple[int, int]], cut: int | None) -> bytes:
    buf = bytearray(data)
    for at, value in changes:
        buf[at % len(buf)] = value
    return bytes(buf[:cut] if cut else buf)


def read_or_refuse(fmt: FileFormat, data: bytes) -> None:
    try:
        parsed = fmt.read(data, Limits())
    except BadFile:
        return
    parsed.render([shout(s.text) for s in parsed.segments])


FUZZ = settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@pytest.mark.parametrize("name", sorted(SAMPLES))
@FUZZ
@given(data=st.data())
def test_mutated_archive_only_refused(name: str, data: st.DataObject) -> None:
    original = sample(name)
    changes = data.draw(mutations(len(original)))
    cut = data.draw(st.none() | st.integers(1, len(original)))
    read_or_refuse(SAMPLES[name][0], mutate(original, changes, cut))


@pytest.mark.parametrize("name", sorted(SAMPLES))
@FUZZ
@given(data=st.data())
def test_mutated_xml_only_refused(name: str, data: st.DataObject) -> None:
    fmt, _, part = SAMPLES[name]
    original = sample(name)
    xml = entries(original)[part]
    changes = data.draw(mutations(len(xml)))
    printable = [(at, value % 95 + 32) for at, value in changes]  # keep it mostly XML
    broken = mutate(xml, data.draw(st.sampled_from([changes, printable])), None)
    read_or_refuse(fmt, rezip(original, {part: broken}))
