"""OpenDocument presentations (.odp): the slides' text boxes, tables and speaker notes, and
the master pages' shapes (see `_odf`)."""

from __future__ import annotations

from dragoman.files.base import FileFormat, Limits
from dragoman.files.formats import _odf
from dragoman.files.package import Package

MEDIA_TYPE = "application/vnd.oasis.opendocument.presentation"


def _read(data: bytes, limits: Limits) -> Package:
    return _odf.read(data, limits, "ODP", MEDIA_TYPE)


FORMAT = FileFormat("odp", (".odp",), MEDIA_TYPE, _read)
