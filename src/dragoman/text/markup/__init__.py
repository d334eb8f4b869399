"""Markup (HTML, XML) as units of plain text with numbered markers for the inline elements, and
back: the model never sees raw markup, and every element comes back exactly once."""

from __future__ import annotations

from dragoman.text.markup.document import Markup, parse_html, parse_xml
from dragoman.text.markup.markers import MARKER_HINT, validate

__all__ = ["MARKER_HINT", "Markup", "parse_html", "parse_xml", "validate"]
