"""The bounded zip reader: hostile archives refused before or while inflating, never inflated
past the limit in memory; archives written back entry for entry."""

from __future__ import annotations

import io
import struct
import tracemalloc
import zipfile

import pytest

from dragoman.errors import BadFile
from dragoman.files.archive import Archive
from dragoman.files.base import Limits


def make_zip(entries: list[tuple[str, bytes, int]]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as zf:
        for name, body, compression in entries:
            zf.writestr(zipfile.ZipInfo(name, (2020, 1, 2, 3, 4, 6)), body, compression)
    return out.getvalue()


def patch_headers(data: bytes, *, size: int | None = None, flags: int | None = None) -> bytes:
    """The zip (one entry) with its local and central headers saying another uncompressed
    size or other flag bits."""
    buf = bytearray(data)
    local = buf.index(b"PK\x03\x04")
    central = buf.index(b"PK\x01\x02")
    if size is not None:
        struct.pack_into("<I", buf, local + 22, size)
        struct.pack_into("<I", buf, central + 24, size)
    if flags is not None:
        struct.pack_into("<H", buf, local + 6, flags)
        struct.pack_into("<H", buf, central + 8, flags)
    return bytes(buf)


def peak_while(action: object) -> int:
    tracemalloc.start()
    try:
        assert callable(action)
        action()
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    return peak


def test_reads_entries_in_order_within_limits() -> None:
    data = make_zip([("b.xml", b"<b/>", zipfile.ZIP_DEFLATED), ("a.png", b"\x89PNG", 0)])
    archive = Archive(data, Limits(), "DOCX")
    assert archive.names == ["b.xml", "a.png"]
    assert archive.read("a.png") == b"\x89PNG"
    assert archive.has("b.xml") and not archive.has("c.xml")


def test_too_many_entries_refused() -> None:
    data = make_zip([(f"e{i}.xml", b"<e/>", 0) for i in range(11)])
    with pytest.raises(BadFile, match="holds 11 entries; the limit is 10"):
        Archive(data, Limits(max_entries=10), "DOCX")


def test_declared_bomb_refused_before_inflating() -> None:
    zeros = 8 * 2**20
    data = make_zip([("word/document.xml", bytes(zeros), zipfile.ZIP_DEFLATED)])
    assert len(data) < zeros // 100
    limits = Limits(max_unpacked_bytes=2**20)

    def read() -> None:
        with pytest.raises(BadFile, match=f"unpacks to {zeros} bytes; the limit is {2**20}"):
            Archive(data, limits, "DOCX")

    assert peak_while(read) < 2**20 // 4


@pytest.mark.parametrize("budget", [Limits().max_unpacked_bytes, 100_000])
def test_lying_bomb_stops_at_its_declared_size(budget: int) -> None:
    real = 16 * 2**20
    data = patch_headers(
        make_zip([("word/document.xml", bytes(real), zipfile.ZIP_DEFLATED)]), size=1000
    )

    def read() -> None:
        with pytest.raises(BadFile):
            Archive(data, Limits(max_unpacked_bytes=budget), "DOCX")

    assert peak_while(read) < 2**20  # a few chunks at most, never the 16 MiB


@pytest.mark.parametrize(
    "name", ["../evil.xml", "word/../../evil.xml", "/etc/passwd", "word\\document.xml", "C:/x"]
)
def test_unsafe_entry_names_refused(name: str) -> None:
    data = make_zip([("word/document.xml", b"<w/>", 0), (name, b"x", 0)])
    with pytest.raises(BadFile, match="unsafe entry name"):
        Archive(data, Limits(), "DOCX")


def test_encrypted_entry_refused() -> None:
    data = patch_headers(make_zip([("word/document.xml", b"<w/>", 0)]), flags=0x1)
    with pytest.raises(BadFile, match="encrypted"):
        Archive(data, Limits(), "DOCX")


def test_duplicate_names_refused() -> None:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as zf:
        zf.writestr("a.xml", b"<a/>")
        with pytest.warns(UserWarning, match="Duplicate name"):
            zf.writestr("a.xml", b"<b/>")
    with pytest.raises(BadFile, match=r"two entries named 'a\.xml'"):
        Archive(out.getvalue(), Limits(), "DOCX")


def test_unsupported_compression_refused() -> None:
    data = make_zip([("a.xml", b"<a/>" * 100, zipfile.ZIP_BZIP2)])
    with pytest.raises(BadFile, match="unsupported compression"):
        Archive(data, Limits(), "DOCX")


@pytest.mark.parametrize("cut", [0.3, 0.6, 0.95])
def test_truncated_zip_refused(cut: float) -> None:
    data = make_zip([(f"e{i}.xml", bytes(range(256)) * 50, 8) for i in range(3)])
    with pytest.raises(BadFile, match="not a readable DOCX file"):
        Archive(data[: int(len(data) * cut)], Limits(), "DOCX")


def test_corrupt_entry_refused() -> None:
    data = bytearray(make_zip([("a.xml", b"<a>" + b"x" * 5000 + b"</a>", 8)]))
    data[40:60] = bytes(20)  # inside the deflated body
    with pytest.raises(BadFile, match="not a readable DOCX file"):
        Archive(bytes(data), Limits(), "DOCX")


@pytest.mark.parametrize("data", [b"", b"PK", b"hello, this is not a zip"])
def test_not_a_zip_refused(data: bytes) -> None:
    with pytest.raises(BadFile, match="not a readable EPUB file"):
        Archive(data, Limits(), "EPUB")


def test_write_keeps_order_compression_and_untouched_bodies() -> None:
    image = bytes(range(256)) * 4
    data = make_zip(
        [
            ("content.xml", b"<a>old</a>", zipfile.ZIP_DEFLATED),
            ("Pictures/x.png", image, zipfile.ZIP_STORED),
            ("mimetype", b"application/vnd.oasis.opendocument.text", zipfile.ZIP_DEFLATED),
        ]
    )
    out = Archive(data, Limits(), "ODT").write({"content.xml": b"<a>new</a>"})
    with zipfile.ZipFile(io.BytesIO(out)) as zf:
        infos = zf.infolist()
        assert [i.filename for i in infos] == ["mimetype", "content.xml", "Pictures/x.png"]
        assert [i.compress_type for i in infos] == [0, 8, 0]
        assert infos[0].extra == b""
        assert zf.read("content.xml") == b"<a>new</a>"
        assert zf.read("Pictures/x.png") == image
        assert infos[2].date_time == (2020, 1, 2, 3, 4, 6)
    # the mimetype's bytes stand at a fixed offset, as ODF and EPUB readers look for them
    assert out[30:38] == b"mimetype" and out[38:50] == b"application/"
