"""OpenDocument text (.odt): see `_odf` for what is translated."""

from __future__ import annotations

from dragoman.files.base import FileFormat, Limits
from dragoman.files.formats import _odf
from dragoman.files.package import Package

MEDIA_TYPE = "application/vnd.oasis.opendocument.text"


def _read(data: bytes, limits: Limits) -> Package:
    return _odf.read(data, limits, "ODT", MEDIA_TYPE)


FORMAT = FileFormat("odt", (".odt",), MEDIA_TYPE, _read)
