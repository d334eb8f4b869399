"""A zip archive read within bounds and written back with some entries replaced.

An office file or an EPUB is a zip of XML parts. A hostile one is refused from its central
directory before anything is inflated (too many entries, sizes summing past the budget, names
that climb out of the archive, encrypted entries), and each entry is inflated in chunks that
stop as soon as it passes its declared size or the budget, so a zip bomb whose headers lie
still never inflates past the limit in memory."""

from __future__ import annotations

import io
import re
import struct
import zipfile
import zlib

from dragoman.errors import BadFile
from dragoman.files.base import Limits

_CHUNK = 64 * 1024
_MIMETYPE = "mimetype"
_COMPRESSIONS = (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED)
_DRIVE = re.compile(r"[A-Za-z]:")
# What zipfile raises on a damaged or unusual archive besides BadZipFile.
_ZIP_ERRORS = (
    zipfile.BadZipFile,
    zipfile.LargeZipFile,
    zlib.error,
    EOFError,
    OSError,
    ValueError,
    NotImplementedError,
    RuntimeError,
    struct.error,
    UnicodeDecodeError,
    OverflowError,
    KeyError,
    IndexError,
)


def unsafe_name(name: str) -> bool:
    """An entry name that is absolute, has a drive, a backslash or a `..` segment."""
    return (
        name.startswith("/")
        or "\\" in name
        or "\x00" in name
        or _DRIVE.match(name) is not None
        or ".." in name.split("/")
    )


class Archive:
    """The entries of a zip, inflated within `limits`, in their order."""

    def __init__(self, data: bytes, limits: Limits, kind: str) -> None:
        self.kind = kind
        try:
            with zipfile.ZipFile(io.BytesIO(data)) as zf:
                self._infos = zf.infolist()
                self._check(limits)
                budget = limits.max_unpacked_bytes
                self._data: dict[str, bytes] = {}
                for info in self._infos:
                    body = _inflate(zf, info, budget)
                    budget -= len(body)
                    self._data[info.filename] = body
        except BadFile:
            raise
        except _ZIP_ERRORS as e:
            raise BadFile(f"not a readable {kind} file: a damaged zip archive ({e})") from None

    def _check(self, limits: Limits) -> None:
        infos = self._infos
        if len(infos) > limits.max_entries:
            raise BadFile(
                f"the {self.kind} archive holds {len(infos)} entries; the limit is "
                f"{limits.max_entries}"
            )
        declared = sum(i.file_size for i in infos)
        if declared > limits.max_unpacked_bytes:
            raise BadFile(
                f"the {self.kind} archive unpacks to {declared} bytes; the limit is "
                f"{limits.max_unpacked_bytes}"
            )
        names = set()
        for info in infos:
            name = info.filename
            if unsafe_name(name):
                raise BadFile(f"the {self.kind} archive has an unsafe entry name: {name!r}")
            if name in names:
                raise BadFile(f"the {self.kind} archive has two entries named {name!r}")
            names.add(name)
            if info.flag_bits & 0x1:
                raise BadFile(f"the {self.kind} file is encrypted ({name!r})")
            if info.compress_type not in _COMPRESSIONS:
                raise BadFile(f"the {self.kind} archive uses an unsupported compression ({name!r})")

    @property
    def names(self) -> list[str]:
        return [i.filename for i in self._infos]

    def has(self, name: str) -> bool:
        return name in self._data

    def read(self, name: str) -> bytes:
        return self._data[name]

    def write(self, replaced: dict[str, bytes]) -> bytes:
        """A new zip: the same entries in the same order, each compressed as it was, with the
        `replaced` ones' new bodies; a `mimetype` entry first and stored (ODF, EPUB)."""
        infos = sorted(self._infos, key=lambda i: i.filename != _MIMETYPE)
        out = io.BytesIO()
        with zipfile.ZipFile(out, "w") as zf:
            for info in infos:
                entry = zipfile.ZipInfo(info.filename, info.date_time)
                entry.external_attr = info.external_attr
                stored = info.filename == _MIMETYPE or info.compress_type == zipfile.ZIP_STORED
                entry.compress_type = zipfile.ZIP_STORED if stored else zipfile.ZIP_DEFLATED
                zf.writestr(entry, replaced.get(info.filename, self._data[info.filename]))
        return out.getvalue()


def _inflate(zf: zipfile.ZipFile, info: zipfile.ZipInfo, budget: int) -> bytes:
    """An entry's body, read in chunks, refused as soon as it passes its declared size or the
    budget left (a header that lies about its size)."""
    limit = min(info.file_size, budget)
    chunks: list[bytes] = []
    size = 0
    with zf.open(info) as f:
        while chunk := f.read(_CHUNK):
            size += len(chunk)
            if size > limit:
                raise BadFile(f"an archive entry inflates past its bounds ({info.filename!r})")
            chunks.append(chunk)
    if size != info.file_size:
        raise BadFile(f"an entry of the archive is truncated ({info.filename!r})")
    return b"".join(chunks)
