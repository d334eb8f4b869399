"""Files translated whole: each format's reader takes a file apart into segments (plain text,
or XML whose inline tags stand for a paragraph's runs) and puts the translated segments back
into the same file. Readers bound what they read (size, archive entries and unpacked bytes, XML
without entities or network) before they read it."""

from dragoman.files.base import FileFormat, Limits, Parsed, Segment
from dragoman.files.registry import find, formats, read, supported

__all__ = ["FileFormat", "Limits", "Parsed", "Segment", "find", "formats", "read", "supported"]
