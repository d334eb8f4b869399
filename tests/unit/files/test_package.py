"""What every zip-of-XML format shares: a translation that changes nothing gives back a file
with the same segments; render can be called again; the segment limit holds while reading;
every reader refuses a hostile archive."""

from __future__ import annotations

import zipfile
from collections.abc import Callable
from functools import cache

import pytest

from dragoman.errors import BadFile, FileTooLarge
from dragoman.files import registry
from dragoman.files.base import FileFormat, Limits
from dragoman.files.formats import docx, epub, odp, odt, pptx, xlsx
from tests.unit.files import test_docx, test_epub, test_odp, test_odt, test_pptx, test_xlsx
from tests.unit.files.office import shout
from tests.unit.files.test_archive import make_zip, patch_headers

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


@cache
def hostile() -> dict[str, bytes]:
    bomb = make_zip([("content.xml", bytes(8 * 2**20), zipfile.ZIP_DEFLATED)])
    return {
        "declared bomb": bomb,
        "lying bomb": patch_headers(bomb, size=100),
        "too many entries": make_zip([(f"e{i}", b"", 0) for i in range(Limits().max_entries + 1)]),
        "traversal": make_zip([("../../etc/cron.d/x", b"x", 0)]),
        "encrypted": patch_headers(make_zip([("content.xml", b"<a/>", 0)]), flags=1),
        "truncated": test_docx.build()[:5000],
        "not a zip": b"%PDF-1.7\n" + bytes(100),
    }


@pytest.mark.parametrize("name", sorted(BOOKS))
@pytest.mark.parametrize("kind", sorted(hostile()))
def test_every_reader_refuses_hostile_archives(name: str, kind: str) -> None:
    fmt = BOOKS[name][0]
    with pytest.raises(BadFile):
        registry.read(
            f"upload{fmt.extensions[0]}", hostile()[kind], Limits(max_unpacked_bytes=2**20)
        )


@pytest.mark.parametrize("name", sorted(BOOKS))
def test_every_reader_bounds_the_upload(name: str) -> None:
    fmt = BOOKS[name][0]
    with pytest.raises(FileTooLarge):
        registry.read(f"upload{fmt.extensions[0]}", BOOKS[name][1](), Limits(max_bytes=1000))
