"""What every zip-of-XML format shares: a translation that changes nothing gives back a file
with the same segments; render can be called again; the segment limit holds while reading."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from dragoman.errors import BadFile
from dragoman.files.base import FileFormat, Limits
from dragoman.files.formats import docx, epub, odp, odt, pptx, xlsx
from tests.unit.files import test_docx, test_epub, test_odp, test_odt, test_pptx, test_xlsx
from tests.unit.files.office import shout

BOOKS: dict[str, tuple[FileFormat, Callable[[], bytes]]] = {
    "docx": (docx.FORMAT, test_docx.build),
    "pptx": (pptx.FORMAT, test_pptx.build),
    "xlsx": (xlsx.FORMAT, test_xlsx.build),
    "odt": (odt.FORMAT, test_odt.build),
    "odp": (odp.FORMAT, test_odp.build),
    "epub": (epub.FORMAT, test_epub.build),
}


@pytest.mark.parametrize("name", sorted(BOOKS))
def test_unchanged_translation_reads_back_the_same_segments(name: str) -> None:
    fmt, build = BOOKS[name]
    parsed = fmt.read(build(), Limits())
    again = fmt.read(parsed.render([s.text for s in parsed.segments]), Limits())
    assert again.segments == parsed.segments


@pytest.mark.parametrize("name", sorted(BOOKS))
def test_render_twice_gives_the_same_file(name: str) -> None:
    fmt, build = BOOKS[name]
    parsed = fmt.read(build(), Limits())
    translated = [shout(s.text) for s in parsed.segments]
    first = parsed.render(translated)
    assert parsed.render(translated) == first
    assert [s.text for s in fmt.read(first, Limits()).segments] == translated


def test_render_wants_one_translation_a_segment() -> None:
    parsed = docx.FORMAT.read(test_docx.build(), Limits())
    with pytest.raises(ValueError, match=f"2 translations for {len(parsed.segments)} segments"):
        parsed.render(["a", "b"])


def test_segment_limit_stops_the_reader() -> None:
    with pytest.raises(BadFile, match="holds more than 3 segments, the limit"):
        docx.FORMAT.read(test_docx.build(), Limits(max_segments=3))
