"""OpenDocument presentations: slides odfpy builds (text boxes with a styled span, a slide
title, speaker notes, a master page's footer) come back with the same pages, frames and
paragraphs, their text translated."""

from __future__ import annotations

import io

import pytest
from lxml import etree
from odf import teletype
from odf.draw import Frame, Page, TextBox
from odf.opendocument import OpenDocumentPresentation, load
from odf.presentation import Notes
from odf.style import MasterPage, PageLayout, PageLayoutProperties, Style, TextProperties
from odf.text import P, Span

from dragoman.errors import BadFile
from dragoman.files import registry
from dragoman.files.base import Limits
from dragoman.files.formats._odf import TEXT
from dragoman.files.formats.odp import FORMAT
from tests.unit.files.office import entries, has_lower_letters, reverse, round_trip, shout
from tests.unit.files.test_odt import build as build_odt


def frame(*paragraphs: P) -> Frame:
    box = Frame(width="20cm", height="3cm", x="1cm", y="1cm")
    text = TextBox()
    for p in paragraphs:
        text.addElement(p)
    box.addElement(text)
    return box


def build() -> bytes:
    doc = OpenDocumentPresentation()
    layout = PageLayout(name="PM1")
    layout.addElement(PageLayoutProperties(pagewidth="28cm", pageheight="21cm"))
    doc.automaticstyles.addElement(layout)
    italic = Style(name="T1", family="text")
    italic.addElement(TextProperties(fontstyle="italic"))
    doc.automaticstyles.addElement(italic)
    master = MasterPage(name="Default", pagelayoutname=layout)
    master.addElement(frame(P(text="Company confidential")))
    doc.masterstyles.addElement(master)
    for number in (1, 2):
        page = Page(name=f"page{number}", masterpagename=master)
        page.addElement(frame(P(text=f"Slide title number {number}")))
        body = P(text="Growth was ")
        body.addElement(Span(stylename=italic, text="strong"))
        body.addText(" this year.")
        page.addElement(frame(body, P(text="12 %")))
        notes = Notes()
        notes.addElement(frame(P(text="Speak slowly here.")))
        page.addElement(notes)
        doc.presentation.addElement(page)
    out = io.BytesIO()
    doc.save(out)
    return out.getvalue()


def shape(data: bytes) -> list[object]:
    doc = load(io.BytesIO(data))
    pages = doc.getElementsByType(Page)
    return [
        len(pages),
        [len(p.getElementsByType(Frame)) for p in pages],
        [len(p.getElementsByType(P)) for p in pages],
        len(doc.getElementsByType(Span)),
    ]


def test_segments() -> None:
    segments = [s.text for s in FORMAT.read(build(), Limits()).segments]
    assert segments.count("Growth was <g1>strong</g1> this year.") == 2
    assert {"Slide title number 1", "Speak slowly here.", "Company confidential"} <= set(segments)
    assert "12 %" not in segments


def test_round_trip_keeps_slides_and_translates_everything() -> None:
    source = build()
    _, out = round_trip(FORMAT, source, shout)
    assert shape(out) == shape(source)
    doc = load(io.BytesIO(out))
    texts = [teletype.extractText(p) for p in doc.getElementsByType(P)]
    assert "SLIDE TITLE NUMBER 2" in texts and "SPEAK SLOWLY HERE." in texts
    assert "12 %" in texts
    span = doc.getElementsByType(Span)[0]
    assert (teletype.extractText(span), span.getAttribute("stylename")) == ("STRONG", "T1")
    styles = etree.fromstring(entries(out)["styles.xml"])
    footer = ["".join(p.itertext()) for p in styles.iter(f"{{{TEXT}}}p")]
    assert footer == ["COMPANY CONFIDENTIAL"]
    content = etree.fromstring(entries(out)["content.xml"])
    lettered = ["".join(p.itertext()) for p in content.iter(f"{{{TEXT}}}p")]
    assert not [t for t in lettered if has_lower_letters(t)]


def test_reordered_span_keeps_its_style() -> None:
    _, out = round_trip(FORMAT, build(), reverse)
    doc = load(io.BytesIO(out))
    body = next(p for p in doc.getElementsByType(P) if "GROWTH" in teletype.extractText(p))
    assert teletype.extractText(body) == " THIS YEAR.STRONGGROWTH WAS "
    assert doc.getElementsByType(Span)[0].getAttribute("stylename") == "T1"


def test_an_odt_named_odp_refused() -> None:
    with pytest.raises(BadFile, match="not an ODP file: its mimetype says"):
        registry.read("slides.odp", build_odt())
