"""Gettext catalogues: what needs a translation is translated and marked fuzzy, plural forms as
the header says, what a translator did kept, and everything around the texts kept."""

from __future__ import annotations

import polib
import pytest

from dragoman.errors import BadFile
from dragoman.files import registry
from dragoman.files.base import Limits, NamesLanguage, Segment, render
from dragoman.files.formats import po
from tests.unit.files.textfakes import fuzz, translate

CATALOGUE = r"""# French translation of Example.
# Copyright (C) 2024 Example authors
msgid ""
msgstr ""
"Project-Id-Version: example 1.0\n"
"Language: \n"
"MIME-Version: 1.0\n"
"Content-Type: text/plain; charset=UTF-8\n"
"Content-Transfer-Encoding: 8bit\n"
"Plural-Forms: nplurals=3; plural=(n==1 ? 0 : n%10>=2 && n%10<=4 ? 1 : 2);\n"

#. Shown on the start page
#: app/views.py:12
msgid "Welcome back, %(name)s!"
msgstr ""

#: app/views.py:20
#, python-format
msgctxt "menu"
msgid "Open"
msgstr ""

#: app/files.py:40
#, python-format
msgid "%d file was deleted."
msgid_plural "%d files were deleted."
msgstr[0] ""
msgstr[1] ""

#: app/files.py:41
msgid "Save"
msgstr "Enregistrer"

#: app/files.py:42
#, fuzzy
#| msgid "Cancel the upload"
msgid "Cancel the download"
msgstr "Annuler le téléversement"

#: app/help.py:7
msgid ""
"First line of help.\n"
"Second line with {count} items."
msgstr ""

#~ msgid "Old text"
#~ msgstr "Vieux texte"
"""


def catalogue(out: bytes) -> polib.POFile:
    return polib.pofile(out.decode(), encoding="utf-8")


def test_po_segments_are_the_entries_that_need_a_translation() -> None:
    parsed = po.FORMAT.read(CATALOGUE.encode(), Limits())
    assert parsed.segments == [
        Segment("Welcome back, %(name)s!"),
        Segment("Open"),
        Segment("%d file was deleted."),
        Segment("%d files were deleted."),
        Segment("Cancel the download"),
        Segment("First line of help.\nSecond line with {count} items."),
    ]


def test_po_translates_marks_fuzzy_and_keeps_the_rest() -> None:
    parsed = po.FORMAT.read(CATALOGUE.encode(), Limits())
    before = catalogue(CATALOGUE.encode())
    after = catalogue(render(parsed, translate(parsed), "pl"))
    assert [(e.msgid, e.msgctxt, e.occurrences, e.comment) for e in after] == [
        (e.msgid, e.msgctxt, e.occurrences, e.comment) for e in before
    ]
    by_id = {e.msgid: e for e in after if not e.obsolete}
    assert by_id["Welcome back, %(name)s!"].msgstr == "WELCOME BACK, %(name)s!"
    assert by_id["Open"].msgstr == "OPEN"
    assert by_id["Open"].flags == ["python-format", "fuzzy"]
    assert by_id["%d file was deleted."].msgstr_plural == {
        0: "%d FILE WAS DELETED.",
        1: "%d FILES WERE DELETED.",
        2: "%d FILES WERE DELETED.",
    }
    assert by_id["Save"].msgstr == "Enregistrer"
    assert not by_id["Save"].fuzzy
    cancel = by_id["Cancel the download"]
    assert (cancel.msgstr, cancel.flags) == ("CANCEL THE DOWNLOAD", ["fuzzy"])
    assert cancel.previous_msgid == "Cancel the upload"
    assert (
        by_id["First line of help.\nSecond line with {count} items."].msgstr
        == "FIRST LINE OF HELP.\nSECOND LINE WITH {count} ITEMS."
    )
    (old,) = after.obsolete_entries()
    assert (old.msgid, old.msgstr) == ("Old text", "Vieux texte")
    assert after.metadata["Language"] == "pl"
    assert after.metadata["Project-Id-Version"] == "example 1.0"
    assert after.header.startswith("French translation of Example.")


def test_po_render_without_a_target_leaves_the_language_header() -> None:
    parsed = po.FORMAT.read(CATALOGUE.encode(), Limits())
    assert isinstance(parsed, NamesLanguage)
    assert catalogue(parsed.render(translate(parsed))).metadata["Language"] == ""


@pytest.mark.parametrize(
    ("forms", "expected"),
    [
        ("nplurals=1; plural=0;", {0: "MANY"}),
        ("nplurals=INTEGER; plural=EXPRESSION;", {0: "ONE", 1: "MANY"}),
        ("nplurals=2; plural=(n > 1);", {0: "ONE", 1: "MANY"}),
    ],
)
def test_po_plural_forms_follow_the_header(forms: str, expected: dict[int, str]) -> None:
    data = (
        f'msgid ""\nmsgstr ""\n"Plural-Forms: {forms}\\n"\n\n'
        'msgid "one"\nmsgid_plural "many"\nmsgstr[0] ""\nmsgstr[1] ""\n'
    )
    parsed = po.FORMAT.read(data.encode(), Limits())
    (entry,) = catalogue(parsed.render(translate(parsed)))
    assert entry.msgstr_plural == expected


def test_po_template_in_latin1_is_read_and_written_in_utf8() -> None:
    data = (
        'msgid ""\nmsgstr ""\n"Content-Type: text/plain; charset=ISO-8859-1\\n"\n\n'
        'msgid "Caf\xe9 ouvert"\nmsgstr ""\n'
    ).encode("latin-1")
    parsed = po.FORMAT.read(data, Limits())
    assert parsed.segments == [Segment("Café ouvert")]
    out = parsed.render(["Кафе открыто"])
    (entry,) = catalogue(out)
    assert entry.msgstr == "Кафе открыто"
    assert "charset=UTF-8" in catalogue(out).metadata["Content-Type"]


def test_po_pot_template_placeholder_charset_reads_as_utf8() -> None:
    data = 'msgid ""\nmsgstr ""\n"Content-Type: text/plain; charset=CHARSET\\n"\n\nmsgid "Café"\n'
    parsed = po.FORMAT.read((data + 'msgstr ""\n').encode(), Limits())
    assert parsed.segments == [Segment("Café")]
    assert registry.find("messages.pot") is po.FORMAT


def test_po_content_naming_a_file_is_not_read_from_disk() -> None:
    with pytest.raises(BadFile):
        po.FORMAT.read(__file__.encode(), Limits())


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b'msgid "a"\nmsgstr "b"\nthis is not gettext\n', "a syntax error at line 3"),
        (b"Hello world", "a syntax error at line 1"),
        (b'msgid "caf\xe9"\nmsgstr ""\n', "not utf-8 text"),
        (b'"Content-Type: text/plain; charset=klingon\\n"', "charset 'klingon'"),
        (b'"Content-Type: text/plain; charset=utf-16\\n"', "not ASCII-compatible"),
        (b'"Content-Type: text/plain; charset=uu\\n"', "charset 'uu' is not one we know"),
        (b"\n\n", "no entries"),
    ],
)
def test_po_malformed_is_bad_file(data: bytes, message: str) -> None:
    with pytest.raises(BadFile, match=message):
        po.FORMAT.read(data, Limits())


def test_po_more_texts_than_the_limit_is_bad_file() -> None:
    data = "".join(f'msgid "text {i}"\nmsgstr ""\n\n' for i in range(11)).encode()
    with pytest.raises(BadFile, match="11 texts to translate; the limit is 10"):
        po.FORMAT.read(data, Limits(max_segments=10))


def test_po_reader_only_reads_or_refuses() -> None:
    fuzz(po.FORMAT.read, CATALOGUE.encode())
