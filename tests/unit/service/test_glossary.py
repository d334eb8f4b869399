from __future__ import annotations

import pytest

from dragoman.errors import InvalidRequest
from dragoman.service.glossary import (
    GlossaryNotFound,
    GlossaryStore,
    missed,
    parse_entries,
    terms_in,
)

GLOSSARY = (("Save", "Enregistrer"), ("log in", "se connecter"), ("数据", "données"))


def test_terms_are_whole_words_in_any_case() -> None:
    assert terms_in("Press SAVE to log in.", GLOSSARY) == GLOSSARY[:2]
    assert terms_in("Saved files are kept", GLOSSARY) == ()  # "Saved" is not "Save"
    assert terms_in("请保存数据", GLOSSARY) == (GLOSSARY[2],)  # CJK: no word boundaries


def test_missed_terms() -> None:
    assert missed("Save it", "Enregistrez-le", GLOSSARY) == ["Save"]
    assert missed("Save it", "Enregistrer", GLOSSARY) == []
    assert missed("Nothing here", "Rien", GLOSSARY) == []


def test_entries_tsv_csv_and_limits() -> None:
    assert parse_entries("a\tb\nc\td\n", "tsv") == (("a", "b"), ("c", "d"))
    assert parse_entries('a,b\n"c, d",e\n', "csv") == (("a", "b"), ("c, d", "e"))
    long_field = "a," + "b" * 131_073  # over the csv module's field limit
    for bad, fmt in (("a\n", "tsv"), ("a\tb", "xlsx"), ("\tb", "tsv"), (long_field, "csv")):
        with pytest.raises(InvalidRequest):
            parse_entries(bad, fmt)


def test_store() -> None:
    store = GlossaryStore()
    g = store.create("ui", "en", "fr", (("Save", "Enregistrer"),))
    assert store.get(g.glossary_id) is g and g.creation_time.endswith("Z")
    store.delete(g.glossary_id)
    with pytest.raises(GlossaryNotFound):
        store.get(g.glossary_id)
