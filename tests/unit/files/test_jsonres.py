"""JSON resource files: every string value translated where it stands, everything else (keys,
order, layout, numbers) byte for byte, and ICU MessageFormat's syntax kept."""

from __future__ import annotations

import json
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dragoman.errors import BadFile
from dragoman.files import registry
from dragoman.files.base import Limits, Segment
from dragoman.files.formats import jsonres
from dragoman.files.formats._icu import NotIcu, scan, texts
from dragoman.service.documents import Sizes, TextOptions, plan
from tests.unit.files.textfakes import fuzz, shout, translate

RESOURCE = """{
    "app": {
        "title": "Photo album",
        "photos": "You have {count, plural, =0 {no photos} one {# photo} other {# photos}}.",
        "greeting": "Hello, {name}! You have %d new messages.",
        "empty": "",
        "time": "12:00",
        "size": 12.50,
        "enabled": true,
        "missing": null,
        "tags": ["Nature", "City \\u00e9t\\u00e9", {"deep": ["Keep going"]}]
    },
    "zeta": "Last one",
    "alpha": "Comes after zeta"
}
"""


def test_json_segments_are_the_string_values() -> None:
    parsed = jsonres.FORMAT.read(RESOURCE.encode(), Limits())
    assert parsed.segments == [
        Segment("Photo album"),
        Segment("You have {icu0}."),
        Segment("no photos"),
        Segment("{icu0} photo"),
        Segment("{icu0} photos"),
        Segment("Hello, {name}! You have %d new messages."),
        Segment("Nature"),
        Segment("City été"),
        Segment("Keep going"),
        Segment("Last one"),
        Segment("Comes after zeta"),
    ]


def test_json_translates_values_and_keeps_keys_order_layout_and_numbers() -> None:
    parsed = jsonres.FORMAT.read(RESOURCE.encode(), Limits())
    out = parsed.render(translate(parsed)).decode()
    before, after = json.loads(RESOURCE), json.loads(out)
    assert list(after) == ["app", "zeta", "alpha"]
    assert list(after["app"]) == list(before["app"])
    assert after["app"]["photos"] == (
        "YOU HAVE {count, plural, =0 {NO PHOTOS} one {# PHOTO} other {# PHOTOS}}."
    )
    assert after["app"]["greeting"] == "HELLO, {name}! YOU HAVE %d NEW MESSAGES."
    assert after["app"]["tags"] == ["NATURE", "CITY ÉTÉ", {"deep": ["KEEP GOING"]}]
    assert (after["zeta"], after["alpha"]) == ("LAST ONE", "COMES AFTER ZETA")
    # Untranslated values and the layout around the strings are the file's own bytes.
    assert '"size": 12.50,' in out and '"time": "12:00",' in out and '"empty": "",' in out
    assert out.splitlines()[2] == '        "title": "PHOTO ALBUM",'
    assert len(out.splitlines()) == len(RESOURCE.splitlines())


def test_json_icu_sent_whole_would_lose_its_syntax() -> None:
    """Why ICU messages are cut up: masked as plain text, its keywords reach the model."""
    message = "{count, plural, one {# photo} other {# photos}}"
    whole = plan(message, "en", TextOptions(), Sizes(300, 200), None)
    assert "plural" in " ".join(whole.units)
    parsed = jsonres.FORMAT.read(json.dumps({"k": message}).encode(), Limits())
    assert all("plural" not in s.text and "other" not in s.text for s in parsed.segments)


@pytest.mark.parametrize(
    ("message", "sent", "translated"),
    [
        (
            "{gender, select, male {He} female {She} other {They}} liked it",
            ["{icu0} liked it", "He", "She", "They"],
            "{gender, select, male {HE} female {SHE} other {THEY}} LIKED IT",
        ),
        (
            "{n, plural, offset:1 =1 {Only you} other {You and # others}}",
            ["Only you", "You and {icu0} others"],
            "{n, plural, offset:1 =1 {ONLY YOU} other {YOU AND # OTHERS}}",
        ),
        (
            "Total: {amount, number, ::currency/EUR} on {day, date, short}",
            ["Total: {icu0} on {icu1}"],
            "TOTAL: {amount, number, ::currency/EUR} ON {day, date, short}",
        ),
        (
            "{a, plural, one {{b, select, x {Nested one} other {Nested}}} other {Many}}",
            ["Nested one", "Nested", "Many"],
            "{a, plural, one {{b, select, x {NESTED ONE} other {NESTED}}} other {MANY}}",
        ),
        (
            "Say '{'braces'}' {n, plural, other {# times}}",
            ["Say '{'braces'}' {icu0}", "{icu0} times"],
            "SAY '{'BRACES'}' {n, plural, other {# TIMES}}",
        ),
    ],
)
def test_icu_sends_only_message_texts(message: str, sent: list[str], translated: str) -> None:
    scanned = scan(message)
    assert scanned is not None
    found = texts(scanned, message)
    assert found.texts == sent
    assert found.rebuild(iter(found.texts)) == message
    assert found.rebuild(iter([shout(t).replace("{ICU", "{icu") for t in sent])) == translated


def test_icu_apostrophe_before_an_argument_stays_an_apostrophe() -> None:
    message = "{n, plural, one {# item} other {# items}}"
    scanned = scan(message)
    assert scanned is not None
    found = texts(scanned, message)
    out = found.rebuild(iter(["l'{icu0} article", "les {icu0} articles"]))
    assert out == "{n, plural, one {l''# article} other {les # articles}}"


def test_icu_stand_ins_never_collide_with_the_message() -> None:
    message = "{icu0} and {n, plural, other {# x}} {icu_0}"
    scanned = scan(message)
    assert scanned is not None
    found = texts(scanned, message)
    assert found.texts == ["{icu__0} and {icu__1} {icu__2}", "{icu__0} x"]
    assert found.rebuild(iter(found.texts)) == message


@pytest.mark.parametrize(
    "message",
    ["{n, plural, one {a} other {b}", "{n, plural, one}", "{n, plural, one {a} x}", "{n, date"],
)
def test_icu_malformed_is_not_icu_and_goes_as_plain_text(message: str) -> None:
    with pytest.raises(NotIcu):
        scan(message)
    parsed = jsonres.FORMAT.read(json.dumps([message]).encode(), Limits())
    assert parsed.segments == [Segment(message)]


@settings(max_examples=300, deadline=None, database=None)
@given(
    st.lists(
        st.sampled_from(
            [
                "{",
                "}",
                "#",
                "'",
                ",",
                " ",
                "n",
                "plural",
                "select",
                "one",
                "other",
                "=0",
                "offset:1",
                "x",
                "{n, plural, ",
                "{s, select, ",
            ]
        ),
        max_size=30,
    )
)
def test_icu_scan_rebuilds_what_it_reads(pieces: list[str]) -> None:
    message = "".join(pieces)
    try:
        scanned = scan(message)
    except NotIcu:
        return
    if scanned is not None:
        found = texts(scanned, message)
        assert found.rebuild(iter(found.texts)) == message


def test_icu_scan_is_linear() -> None:
    message = "{n, plural, other {" * 5 + "'{" * 50_000 + "x " * 100_000
    started = time.perf_counter()
    with pytest.raises(NotIcu):
        scan(message)
    assert time.perf_counter() - started < 0.5


def test_json_keeps_bom_duplicates_and_writes_letters_unescaped() -> None:
    data = '\ufeff{"a": "Caf\\u00e9", "a": "Tea"}'.encode()
    parsed = jsonres.FORMAT.read(data, Limits())
    assert parsed.render(["Café noir", "Thé"]).decode() == '\ufeff{"a": "Café noir", "a": "Thé"}'


def test_json_lone_surrogate_is_written_as_an_escape() -> None:
    parsed = jsonres.FORMAT.read(b'["bad \\ud800 text"]', Limits())
    out = parsed.render([s.text for s in parsed.segments])
    assert json.loads(out) == ["bad \ud800 text"]


def test_json_is_registered() -> None:
    assert registry.find("messages.fr.json") is jsonres.FORMAT


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b'{"a": "b",}', r"not JSON: .* \(line 1, column 11\)"),
        (b'{\n  "a": "unclosed\n}', r"line 2"),
        (b"[" * 100_000 + b"]" * 100_000, "nested too deep"),
        (b'{"a": "caf\xe9"}', "not UTF-8"),
        (b"   ", "not JSON"),
    ],
)
def test_json_malformed_is_bad_file(data: bytes, message: str) -> None:
    with pytest.raises(BadFile, match=message):
        jsonres.FORMAT.read(data, Limits())


def test_json_more_strings_than_the_limit_is_bad_file() -> None:
    data = json.dumps({f"k{i}": f"text {i}" for i in range(11)}).encode()
    with pytest.raises(BadFile, match="more than 10 strings"):
        jsonres.FORMAT.read(data, Limits(max_segments=10))


def test_json_reader_only_reads_or_refuses() -> None:
    fuzz(jsonres.FORMAT.read, RESOURCE.encode())
