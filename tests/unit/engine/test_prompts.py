from __future__ import annotations

from typing import Any

import pytest

from dragoman.engine.prompts import EXAMPLES, PromptBuilder, chat_messages, output_budget
from dragoman.errors import UnsupportedLanguage


def test_chat_messages_name_both_languages() -> None:
    messages = chat_messages("Hallo", "de", "ja")
    assert messages[0]["role"] == "system"
    assert messages[-1] == {
        "role": "user",
        "content": "Translate the following German text into Japanese.\n\nHallo",
    }


def test_examples_come_first_as_earlier_turns_of_the_chat() -> None:
    messages = chat_messages("work factor", "en", "de")
    assert [m["role"] for m in messages] == ["system", *["user", "assistant"] * 3, "user"]
    assert (
        messages[1]["content"]
        == "Translate the following English text into German.\n\nDelivery date"
    )
    assert [m["content"] for m in messages[2:7:2]] == list(EXAMPLES["de"])


def test_a_language_without_examples_gets_the_bare_instruction() -> None:
    messages = chat_messages("Ciao", "it", "en")
    assert [m["role"] for m in messages] == ["system", "user"]


def test_hints_and_glossary_go_to_the_text_not_the_examples() -> None:
    messages = chat_messages("Hi {1}", "en", "fr", (("Hi", "Salut"),))
    assert all("{1}" not in m["content"] and "Salut" not in m["content"] for m in messages[:-1])
    assert "placeholder" in messages[-1]["content"]
    assert '"Hi" as "Salut"' in messages[-1]["content"]


class WordTokenizer:
    """One token per word of the chat as plain text."""

    def apply_chat_template(self, messages: list[dict[str, str]], **_: Any) -> str:
        return " ".join(m["content"] for m in messages)

    def encode(self, text: str, **_: Any) -> list[int]:
        return [len(w) for w in text.split()]


def test_the_budget_counts_the_text_alone_whatever_the_pair_examples() -> None:
    builder = PromptBuilder(WordTokenizer(), max_model_len=4096, ratio=1.0, cap=512)
    for source, target in [("en", "de"), ("en", "ja"), ("it", "en")]:
        _, budget = builder.build("one two three four", source, target)
        assert budget == output_budget(4, 1.0, 512)


def test_chat_messages_unknown_code_raises() -> None:
    with pytest.raises(UnsupportedLanguage):
        chat_messages("x", "en", "qq")


@pytest.mark.parametrize(
    ("tokens", "ratio", "cap", "expected"),
    [(10, 3.0, 512, 46), (1000, 3.0, 512, 512), (0, 3.0, 512, 16), (5, 1.0, 8, 8)],
)
def test_output_budget_scales_with_input_and_respects_cap(
    tokens: int, ratio: float, cap: int, expected: int
) -> None:
    assert output_budget(tokens, ratio, cap) == expected
