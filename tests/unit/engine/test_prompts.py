from __future__ import annotations

import pytest

from dragoman.engine.prompts import chat_messages, output_budget, repetition_start
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


def test_repetition_start_single_token_loop_keeps_first_copy() -> None:
    tokens = [1, 2, 3] + [7] * 16
    assert repetition_start(tokens, 16) == 4  # keep [1, 2, 3, 7]


def test_repetition_start_single_token_needs_the_whole_span() -> None:
    assert repetition_start([1] + [7] * 15, 16) is None


def test_repetition_start_multi_token_unit() -> None:
    tokens = [5, 6] + [10, 11, 12] * 6  # 18 tokens of a 3-token unit
    assert repetition_start(tokens, 16) == 5  # keep [5, 6, 10, 11, 12]


def test_repetition_start_long_unit_three_copies() -> None:
    unit = list(range(100, 112))  # 12 tokens, like a repeated clause
    tokens = [1, 2] + unit * 3
    assert repetition_start(tokens, 16) == 2 + 12


def test_repetition_start_walks_back_over_earlier_copies() -> None:
    tokens = [9] + [4, 4] * 10
    assert repetition_start(tokens, 16) == 2  # keep [9, 4]


@pytest.mark.parametrize(
    "tokens",
    [
        list(range(60)),
        [1, 2, 1, 2, 1, 2, 3],
        list(range(20)) * 2,  # a 20-token unit is longer than the guard looks for
        [3, 4, 5] * 5 + [6],  # the run does not reach the tail
    ],
)
def test_repetition_start_none_without_a_loop(tokens: list[int]) -> None:
    assert repetition_start(tokens, 16) is None


def test_repetition_start_disabled_with_zero() -> None:
    assert repetition_start([1] * 50, 0) is None
