from __future__ import annotations

import threading

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dragoman.service.glossary as glossary_module
from dragoman.errors import InvalidRequest
from dragoman.service.glossary import (
    BUILT_OFF_LOOP,
    MAX_ENTRIES_CHARS,
    MAX_LINES,
    TermIndex,
    from_json,
    holds,
    index_of,
    made,
    missed,
    parse_entries,
    terms_in,
    to_json,
)

GLOSSARY = (("Save", "Enregistrer"), ("log in", "se connecter"), ("数据", "données"))
INDEX = TermIndex.of(GLOSSARY)


def test_terms_are_whole_words_in_any_case() -> None:
    assert terms_in("Press SAVE to log in.", INDEX) == GLOSSARY[:2]
    assert terms_in("Saved files are kept", INDEX) == ()  # "Saved" is not "Save"
    assert terms_in("请保存数据", INDEX) == (GLOSSARY[2],)  # CJK: no word boundaries


def test_missed_terms() -> None:
    assert missed(["Save it"], ["Enregistrez-le"], INDEX) == ["Save"]
    assert missed(["Save it"], ["Enregistrer"], INDEX) == []
    assert missed(["Nothing here"], ["Rien"], INDEX) == []
    # one text's sentences together: the term in one, its target in another's reply
    assert missed(["Hello.", "Save it."], ["Bonjour.", "Enregistrer."], INDEX) == []


def test_inline_markers_are_not_words() -> None:
    terms = TermIndex.of((("G1", "Gé1"), ("Acme Cloud", "Nuage Acme")))
    assert missed(["Open <g1>Acme</g1> <g2>Cloud</g2>"], ["Ouvrez <g1>x</g1>"], terms) == [
        "Acme Cloud"
    ]
    assert missed(["Open <g1>it</g1><x2/>"], ["Ouvrez <g1>le</g1><x2/>"], terms) == []
    assert missed(["Acme<x1/>Cloud"], ["Nuage<x1/> Acme"], terms) == []


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.sampled_from(["save", "Save", "log in", "数据", "é", "a_b", "x-y", "Ä"]), min_size=1
    ),
    st.text(alphabet="saveSAVElogin 数据éÉa_bx-yäÄ.\n", max_size=40),
)
def test_the_index_finds_what_a_term_by_term_search_finds(terms: list[str], text: str) -> None:
    # (not letters whose lower case is longer, as "İ": regex and str.lower fold them apart)
    glossary = tuple((t, f"<{t}>") for t in dict.fromkeys(terms))
    expected = tuple((s, t) for s, t in glossary if holds(text, s))
    assert TermIndex(glossary).held(text) == expected


def test_a_large_glossary_is_one_pass_not_a_search_per_term() -> None:
    """5,000 entries (the most a glossary holds) past the old pattern cache of 4,096 made
    every term a fresh regex for every sentence: seconds per request, the loop held."""
    glossary = tuple((f"term{i}", f"terme{i}") for i in range(5000))
    index = TermIndex.of(glossary)
    assert TermIndex.of(glossary) is index  # built once for the glossary
    assert terms_in("Use term42 and term4999, not term50000.", index) == (
        ("term42", "terme42"),
        ("term4999", "terme4999"),
    )
    assert missed(["Use term42."], ["Utilisez terme42."], index) == []


def test_placeholder_tokens_are_not_words() -> None:
    # A unit is masked ("Hi {name}" -> "Hi {1}"): its token held the term "1", so the model
    # was asked for "un" and the answer reported "1" missed, for a text with no "1" at all.
    index = TermIndex((("1", "un"), ("2", "deux")))
    assert terms_in("Hi {1}, you have {2} new items", index) == ()
    assert missed(["Hi {1}, you have {2} items"], ["Salut {1}, {2}"], index) == []
    assert terms_in("You have 1 item", index) == (("1", "un"),)


def test_a_combining_mark_is_part_of_its_word() -> None:
    index = TermIndex.of((("phone", "téléphone"),))
    assert terms_in("İPHONE kılıfı", index) == ()  # "İ" lowers to "i" and a combining dot
    assert terms_in("my phone", index) == (("phone", "téléphone"),)
    assert TermIndex(()).held("anything") == ()


async def test_indexes_are_kept_within_a_bound_in_terms_and_large_ones_built_off_the_loop(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    built_in: list[str] = []
    real_init = TermIndex.__init__

    def init(self: TermIndex, glossary: tuple[tuple[str, str], ...]) -> None:
        built_in.append(threading.current_thread().name)
        real_init(self, glossary)

    monkeypatch.setattr(TermIndex, "__init__", init)
    monkeypatch.setattr(glossary_module, "_INDEXES", {})
    monkeypatch.setattr(glossary_module, "MAX_INDEXED_TERMS", 5 * BUILT_OFF_LOOP)
    big = [tuple((f"t{k}-{i}", "x") for i in range(BUILT_OFF_LOOP)) for k in range(8)]
    first = await index_of(big[0])
    assert await index_of(big[0]) is first  # built once
    assert built_in == [built_in[0]] and built_in[0] != threading.current_thread().name
    for g in big[1:]:
        await index_of(g)
    indexed = sum(map(len, glossary_module._INDEXES))
    assert indexed <= 5 * BUILT_OFF_LOOP and big[-1] in glossary_module._INDEXES
    assert big[0] not in glossary_module._INDEXES  # the least recently asked went first
    await index_of((("small", "petit"),))
    assert built_in[-1] == threading.current_thread().name  # a small one: no thread


def test_entries_tsv_csv_and_limits() -> None:
    assert parse_entries("a\tb\n\n \nc\td\n", "tsv", "en", "fr") == (("a", "b"), ("c", "d"))
    # the length is the stored term's, spaces around it stripped
    assert parse_entries("x" * 200 + "  \tb", "tsv", "en", "fr") == (("x" * 200, "b"),)
    assert parse_entries('a,b\n"c, d",e\n', "csv", "en", "fr") == (("a", "b"), ("c, d", "e"))
    for fmt in ("tsv", "csv"):  # a byte-order mark is not part of the first term
        assert parse_entries(
            "\ufeffSave\tx" if fmt == "tsv" else "\ufeffSave,x", fmt, "en", "fr"
        ) == (("Save", "x"),)
    # CSV rows may name their pair (DeepL's export): rows of another pair are skipped
    csv_pairs = "a,b,EN,FR\nc,d,en,de\ne,f,en-GB,fr\ng,h,x\n"
    assert parse_entries(csv_pairs, "csv", "en", "fr") == (("a", "b"), ("e", "f"), ("g", "h"))
    long_field = "a," + "b" * 131_073  # over the csv module's field limit
    for bad, fmt, why in (
        ("a\n", "tsv", "no target term"),
        ("a\tb", "xlsx", "entries_format"),
        ("\tb", "tsv", "must not be empty"),
        (long_field, "csv", "not valid CSV"),
        ("", "tsv", "no entries"),
        ("\n \n", "csv", "no entries"),
        ("a,b,en,de", "csv", "no entries"),
        ("a\tb\tc", "tsv", "more than one tab"),
        ("a\tb\nc\td\na \te", "tsv", "line 3 repeats the source term of line 1"),
        ('"a\nb",c', "csv", "line breaks"),
        ("a\x07\tb", "tsv", "control characters"),
        ("a\tb\u2028c", "tsv", "line breaks"),
        ("a\x1f\tb\x85", "tsv", "control characters"),  # at a term's edge too
        ("a\tb\u2029", "tsv", "line breaks"),
        ("x" * (MAX_ENTRIES_CHARS + 1), "tsv", "at most"),
        ("a\tb\r\n" * (MAX_LINES // 2 + 1), "csv", "over 20000 lines"),
    ):
        with pytest.raises(InvalidRequest, match=why):
            parse_entries(bad, fmt, "en", "fr")


def test_a_stored_glossary_keeps_its_text_as_utf8_not_escapes() -> None:
    """Each non-ASCII character was stored as a 6-byte \\uXXXX escape: 5,000 long Cyrillic
    entries took 12 MB (read back within the shared store's 1 s bound), 4 as UTF-8."""
    entries = tuple((f"{i:05d}" + "é" * 195, "ж" * 200) for i in range(5000))
    g = made("глоссарий", "en", "ru", entries)
    text = to_json(g)
    assert len(text.encode()) < 5_000_000
    assert from_json(text, g.glossary_id) == g
