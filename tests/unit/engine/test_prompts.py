from __future__ import annotations

import pytest

from dragoman.engine.prompts import chat_messages, output_budget
from dragoman.errors import UnsupportedLanguage


def test_chat_messages_name_both_languages() -> None:
    messages = chat_messages("Hallo", "de", "ja")
    assert messages[0]["role"] == "system"
    assert messages[1]["content"] == "Translate the following German text into Japanese.\n\nHallo"


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
