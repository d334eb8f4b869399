from __future__ import annotations

import pytest

from dragoman.engine.hygiene import clean_output


@pytest.mark.parametrize(
    ("output", "source", "expected"),
    [
        ("Here is the translation:\n\nBonjour le monde.", "Hello world.", "Bonjour le monde."),
        ("Here's the French translation:\nBonjour.", "Hello.", "Bonjour."),
        ("Here’s the French translation: Bonjour.", "Hello.", "Bonjour."),
        ("Sure! Here is the translation into French:\n\nBonjour.", "Hello.", "Bonjour."),
        ("Voici la traduction :\nBonjour.", "Hello.", "Bonjour."),
        ("Hier ist die Übersetzung:\nHallo.", "Hello.", "Hallo."),
        ("以下是翻译：\n你好。", "Hello.", "你好。"),
        ("아래의 문장은 영어로는 다음과 같습니다:\nHello.", "안녕하세요.", "Hello."),
        ("다음은 한국어 번역입니다:\n안녕하세요.", "Hello.", "안녕하세요."),
        ("以下は翻訳です：\nこんにちは。", "Hello.", "こんにちは。"),
    ],
)
def test_clean_output_drops_preamble_sentence(output: str, source: str, expected: str) -> None:
    assert clean_output(output, source) == expected


@pytest.mark.parametrize(
    ("output", "expected"),
    [
        ("Translation: Bonjour.", "Bonjour."),
        ("French translation:\nBonjour.", "Bonjour."),
        ("Traduction : Bonjour.", "Bonjour."),
        ("Übersetzung: Hallo.", "Hallo."),
        ("翻译：你好。", "你好。"),
        ("번역: 안녕하세요.", "안녕하세요."),
        ("翻訳：こんにちは。", "こんにちは。"),
    ],
)
def test_clean_output_drops_label_at_start(output: str, expected: str) -> None:
    assert clean_output(output, "Hello.") == expected


def test_clean_output_drops_unknown_colon_line_when_output_has_an_extra_line() -> None:
    assert clean_output("The text reads as follows:\nBonjour.", "Hello.") == "Bonjour."


@pytest.mark.parametrize(
    ("output", "source"),
    [
        ("Ingrédients :\nfarine\nsucre", "Ingredients:\nflour\nsugar"),  # a heading
        ("Il a dit :\n« salut »", "He said: 'hi'"),  # the colon line translates the source's
        ("Traduction : le mot.", "Translation: the word."),  # the source has the label
        ("Traduction : le mot.", "Übersetzung: das Wort."),
        ("Voici le plan : nous partons.", "Here is the plan: we leave."),  # not a translation
        ("Voici la traduction : la voici.", "Here is the translation: here it is."),
        ("Liste :\nun\ndeux", "Liste :\none\ntwo"),
    ],
)
def test_clean_output_keeps_first_line_the_source_has(output: str, source: str) -> None:
    assert clean_output(output, source) == output


@pytest.mark.parametrize(
    ("output", "expected"),
    [
        ('"Bonjour."', "Bonjour."),
        ("“Bonjour.”", "Bonjour."),
        ("« Bonjour. »", "Bonjour."),
        ("„Hallo.“", "Hallo."),
        ("「こんにちは。」", "こんにちは。"),
        ("『こんにちは。』", "こんにちは。"),
        ("'Bonjour.'", "Bonjour."),
        ("```\nBonjour.\n```", "Bonjour."),
        ("```text\nBonjour.\nAu revoir.\n```", "Bonjour.\nAu revoir."),
    ],
)
def test_clean_output_unwraps_whole_output(output: str, expected: str) -> None:
    assert clean_output(output, "Hello.\nGoodbye.") == expected


@pytest.mark.parametrize(
    ("output", "source", "expected"),
    [
        # Seen on the real model (en->ko): a translation, then a line re-quoting it.
        (
            '"그는 마을 근처에서 기다립니다."\n이 문장은 한국어로는 "그는 마을 근처에서',
            "He lies in wait near the villages.",
            "그는 마을 근처에서 기다립니다.",
        ),
        ("Bonjour.\nThis is a greeting in French.", "Hello.", "Bonjour."),
        ("Bonjour.\nAu revoir.", "Hello.\nGoodbye.", "Bonjour.\nAu revoir."),
        ("Il a dit :\n« salut »", "He said: 'hi'", "Il a dit :\n« salut »"),
    ],
)
def test_clean_output_keeps_one_line_for_a_one_line_source(
    output: str, source: str, expected: str
) -> None:
    assert clean_output(output, source) == expected


@pytest.mark.parametrize(
    ("output", "source"),
    [
        ('"Bonjour."', '"Hello."'),
        ("« Bonjour. »", "“Hello.”"),
        ("「こんにちは。」", "'Hello.'"),
        ('"Oui", dit-il, "non".', "Yes, he said, no."),  # two quotations, not one wrapper
        ("「A」と「B」", "A and B"),
        ("```python\nprint(1)\n```", "```python\nprint(1)\n```"),
    ],
)
def test_clean_output_keeps_wrapper_the_source_has(output: str, source: str) -> None:
    assert clean_output(output, source) == output


@pytest.mark.parametrize(
    "note",
    [
        "Note: I used the formal register.",
        "(Note: formal register.)",
        "**Note:** formal register.",
        "注：正式语气。",
        "참고: 존댓말입니다.",
        "注意：丁寧語です。",
    ],
)
def test_clean_output_drops_trailing_note(note: str) -> None:
    assert clean_output(f"Bonjour.\n\n{note}", "Hello.") == "Bonjour."


def test_clean_output_keeps_note_the_source_has() -> None:
    output = "Bonjour.\n\nRemarque : apportez vos papiers."
    assert clean_output(output, "Hello.\n\nNote: bring your papers.") == output


def test_clean_output_keeps_note_when_paragraphs_match_the_source() -> None:
    output = "Bonjour.\n\nNote : il pleut."
    assert clean_output(output, "Hello.\n\nIt rains, to be noted.") == output


def test_clean_output_applies_every_rule_together() -> None:
    output = 'Sure! Here is the translation:\n\n"Bonjour."\n\nNote: formal.'
    assert clean_output(output, "Hello.") == "Bonjour."


def test_clean_output_strips_outer_whitespace_only() -> None:
    assert clean_output("  Bonjour,\n\n  le monde.  \n", "Hello,\n\nworld.") == (
        "Bonjour,\n\n  le monde."
    )


@pytest.mark.parametrize("output", ["Translation:", '""', "Here is the translation:\n\n"])
def test_clean_output_never_returns_empty(output: str) -> None:
    assert clean_output(output, "Hello.") == output.strip()
