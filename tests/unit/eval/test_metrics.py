from __future__ import annotations

from collections.abc import Sequence

import pytest

from dragoman.eval import metrics
from dragoman.eval.client import Output
from dragoman.eval.sets import EvalItem


def item(source: str, reference: str, kind: str = "sentence", target: str = "fr") -> EvalItem:
    return EvalItem(f"en-{target}/{kind}/x", "en", target, kind, source, reference, "test")


def by_marker(texts: Sequence[str]) -> list[str | None]:
    """A stand-in detector: text starting with '[xx]' is language xx, anything else fr."""
    return [t[1:3] if t.startswith("[") else ("fr" if t else None) for t in texts]


def test_chrf_of_toy_strings_is_known() -> None:
    # 1-grams: 2 of 3 match; 2-grams: 1 of 2; 3-grams: 0 of 1; longer: none on either side.
    # Precision = recall = (2/3 + 1/2 + 0) / 3 = 7/18, and so is F-beta.
    rows = metrics.score([item("x", "abd")], [Output("abc")], [(True, False)])
    assert rows[0]["chrf"] == pytest.approx(100 * 7 / 18, abs=0.01)
    rows = metrics.score([item("x", "abc")], [Output("abc")], [(True, False)])
    assert rows[0]["chrf"] == 100.0
    assert rows[0]["bleu"] == 100.0


def test_failed_requests_score_as_empty_and_are_counted() -> None:
    items = [item("Hello there", "Bonjour"), item("Thanks a lot", "Merci beaucoup")]
    outputs = [Output("Bonjour"), Output(error="HTTP 503: draining")]
    rows, records = metrics.evaluate(items, outputs, by_marker)
    pair_row = rows[0]
    assert pair_row["errors"] == 1
    assert 0 < pair_row["chrf"] < 100
    assert records[1]["error"] == "HTTP 503: draining"
    assert pair_row["language_checked"] == 1


def test_counts_of_failures() -> None:
    items = [
        item("Save", "Enregistrer"),
        item("Delete", "Supprimer"),
        item("Open", "Ouvrir"),
        item("Cancel", "Annuler"),
        item("Close", "[en]Close"),  # a reference that does not read as French: not judged
    ]
    outputs = [
        Output("[en]Save", "stop"),
        Output("Supprimer " * 5, "repetition"),
        Output("Voici la traduction : Ouvrir", "stop"),
        Output("Annuler", "length"),
        Output("[en]Close", "stop"),
    ]
    rows, records = metrics.evaluate(items, outputs, by_marker)
    row = rows[0]
    assert (row["pair"], row["kind"], row["n"]) == ("en-fr", "sentence", 5)
    assert row["wrong_language"] == 1
    assert row["language_checked"] == 4
    assert row["over_3x"] == 2  # the repetition and the preamble
    assert row["guard_stopped"] == 1
    assert row["length_stopped"] == 1
    assert row["preamble"] == 1
    assert [r["wrong_language"] for r in records] == [True, False, False, False, False]


def test_rows_per_pair_and_kind_then_all() -> None:
    items = [
        item("a b", "c d", "ui"),
        item("a b c", "c d e", "paragraph"),
        item("x", "y", "ui", "de"),
    ]
    rows = metrics.score(items, [Output("c d")] * 3, [(True, False)] * 3)
    assert [(r["pair"], r["kind"], r["n"]) for r in rows] == [
        ("en-fr", "ui", 1),
        ("en-fr", "paragraph", 1),
        ("en-fr", "all", 2),
        ("en-de", "ui", 1),
        ("en-de", "all", 1),
    ]


@pytest.mark.parametrize(
    ("output", "source", "expected"),
    [
        ("Here is the translation: Bonjour", "Hello", True),
        ("Voici la traduction :\nBonjour", "Hello", True),
        ("以下是翻译：你好", "Hello", True),
        ("French: Bonjour", "Hello", True),
        ("Il a dit :\nbonjour\nà tous", "He said: hello to all", False),
        ("Bonjour", "Hello", False),
        ("Paramètres de traduction", "Translation settings", False),
        ("Remarque :\nRien", "Note:\nNothing", False),
        ("", "Hello", False),
    ],
)
def test_preambles(output: str, source: str, expected: bool) -> None:
    assert metrics.has_preamble(output, source) is expected


def test_length_counts_what_scripts_carry() -> None:
    assert metrics.over_length("a" * 31, "a" * 10)
    assert not metrics.over_length("a" * 30, "a" * 10)
    # Four Chinese characters say about as much as "Show counts"; not 3x in either direction.
    assert not metrics.over_length("显示计数", "Show counts")
    assert not metrics.over_length("Show counts", "显示计数")
    assert metrics.text_length("개수 표시") == 9


def test_bleu_tokenizer_follows_the_target() -> None:
    assert [metrics.bleu_tokenizer(t) for t in ("zh", "ja", "ko", "fr")] == [
        "zh",
        "char",
        "13a",
        "13a",
    ]


def test_the_real_detector_catches_drift() -> None:
    detect = metrics.lingua_detect(["en", "fr", "de", "ko", "ja", "zh"])
    assert detect(["Ceci est une phrase en français.", "이것은 한국어 문장입니다.", ""]) == [
        "fr",
        "ko",
        None,
    ]


def test_copied_names_are_names_and_identifiers_not_sentence_starts() -> None:
    source = 'Then came the word of Yahweh to Jeremiah. Take "master_doc" from conf.py, UUID 4.'
    assert metrics.copied_names(source) == {"Yahweh", "Jeremiah", "master_doc", "conf.py", "UUID"}


def test_output_is_judged_without_names_copied_from_the_source() -> None:
    source = "the king of Tappuah, one; the king of Hepher, one;"
    output = "El rey de Tappuah, uno; el rey de Hepher, uno;"
    assert metrics.without_copied_names(output, source) == "El rey de uno; el rey de uno;"
    # Names the output does not copy verbatim stay: only the source's own spelling is removed.
    assert metrics.without_copied_names("el rey de Tapúaj", source) == "el rey de Tapúaj"


@pytest.mark.parametrize(
    ("output", "source"),
    [
        ("Content Types", "Content Types"),  # an echo is judged whole, Title Case and all
        ("Django", "Install Django"),  # nothing but a name: judged as it is
    ],
)
def test_echoes_and_bare_names_are_judged_whole(output: str, source: str) -> None:
    assert metrics.without_copied_names(output, source) == output


def test_an_english_echo_with_names_stays_english() -> None:
    source = "Then came the word of Yahweh to Jeremiah in Tahpanhes, saying, Take great stones."
    output = "und sie kamen. Then came the word of Yahweh to Jeremiah in Tahpanhes, saying"
    kept = metrics.without_copied_names(output, source)
    assert kept == "und sie kamen. Then came the word of to in saying"
    detect = metrics.lingua_detect(["en", "de", "es", "nl"])
    assert detect([kept]) == ["en"]


def test_names_do_not_make_a_spanish_verse_dutch() -> None:
    source = (
        "the king of Tappuah, one; the king of Hepher, one; the king of Aphek, one; "
        "the king of Lassharon, one; the king of Madon, one; the king of Hazor, one;"
    )
    output = (
        "El rey de Tappuah, uno; el rey de Hepher, uno; el rey de Aphek, uno; "
        "el rey de Lassharon, uno; el rey de Madon, uno; el rey de Hazor, uno;"
    )
    items = [item(source, "el rey de Tapúaj, uno; el rey de Hefer, uno;", "paragraph", "es")]
    detect = metrics.lingua_detect(["en", "es", "de", "nl"])
    assert metrics.language_checks(items, [Output(output)], detect) == [(True, False)]
