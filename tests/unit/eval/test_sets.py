from __future__ import annotations

import pytest

from dragoman.eval import corpora, sets

PAIRS = [("en", "fr"), ("en", "ko"), ("en", "zh"), ("en", "ja")]


def test_sets_repeat_exactly_for_a_seed() -> None:
    assert sets.build(PAIRS, sets.KINDS, 5, seed=1) == sets.build(PAIRS, sets.KINDS, 5, seed=1)
    assert sets.build(PAIRS, sets.KINDS, 5, seed=1) != sets.build(PAIRS, sets.KINDS, 5, seed=2)


@pytest.mark.parametrize("pair", [*PAIRS, ("en", "de"), ("en", "es"), ("fr", "de"), ("ja", "en")])
def test_every_pair_gets_every_kind_with_references_unlike_sources(pair: tuple[str, str]) -> None:
    items = sets.build([pair], sets.KINDS, 20)
    for kind in sets.KINDS:
        of_kind = [i for i in items if i.kind == kind]
        assert len(of_kind) == 20, kind
        assert len({i.source for i in of_kind}) == 20
    for item in items:
        assert item.pair == f"{pair[0]}-{pair[1]}"
        assert item.source.strip() and item.reference.strip()
        assert item.source != item.reference


def test_kinds_have_their_lengths() -> None:
    items = sets.build([("en", "fr")], sets.KINDS, 20)
    words = {k: [len(i.source.split()) for i in items if i.kind == k] for k in sets.KINDS}
    assert all(2 <= w <= 7 for w in words["ui"])
    assert all(8 <= w <= 40 for w in words["sentence"])
    assert all(60 <= w <= 130 for w in words["paragraph"])


def test_the_same_english_texts_serve_every_target() -> None:
    fr = sets.build([("en", "fr")], ["sentence", "paragraph"], 10)
    ja = sets.build([("en", "ja")], ["sentence", "paragraph"], 10)
    shared = {i.source for i in fr} & {i.source for i in ja}
    assert len(shared) >= 15


def test_references_are_the_catalogues_and_bibles_own() -> None:
    items = sets.build([("en", "fr")], sets.KINDS, 20)
    for item in items:
        if item.origin == "catalogue":
            assert corpora.catalogue("fr")[item.source] == item.reference
        else:
            book, chapter, verse = map(int, item.origin.split()[1].split(":"))
            assert item.reference.startswith(corpora.bible("fr")[(book, chapter, verse)])
            assert item.source.startswith(corpora.bible("en")[(book, chapter, verse)])


def test_no_placeholders_or_markup_in_catalogue_texts() -> None:
    for item in sets.build([("en", "de")], ["ui", "sentence"], 40):
        assert not any(mark in item.source for mark in ("%", "{", "<", "\n"))


def test_chinese_bible_loses_its_clause_padding() -> None:
    verse = corpora.bible("zh")[(43, 3, 16)]
    assert " " not in verse
    assert (
        corpora.unspace_cjk("耶稣看见群众， 就上了山； Django 管理")
        == "耶稣看见群众，就上了山；Django管理"
    )
    assert corpora.unspace_cjk("하나님이 세상을") == "하나님이 세상을"


def test_unknown_kind_and_missing_data_are_refused() -> None:
    with pytest.raises(ValueError, match="unknown kind 'poem'"):
        sets.build([("en", "fr")], ["poem"], 1)
    with pytest.raises(ValueError, match="no paragraph data for th"):
        sets.build([("en", "th")], ["paragraph"], 1)
