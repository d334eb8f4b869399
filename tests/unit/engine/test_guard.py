from __future__ import annotations

import random
from collections.abc import Sequence

import pytest

from dragoman.engine.guard import RepetitionGuard, guard_for, source_copies

NEWLINE = 198
CHUNKINGS = [[1], [3], [7, 1, 13, 2], [64], [10_000]]  # sizes of successive deltas, cycled


def feed_all(
    guard: RepetitionGuard, tokens: Sequence[int], sizes: Sequence[int] = (1,)
) -> int | None:
    """Feed `tokens` as the engine would, in deltas of the given sizes; the first cut."""
    at, step = 0, 0
    while at < len(tokens):
        size = sizes[step % len(sizes)]
        cut = guard.feed(tokens[at : at + size])
        if cut is not None:
            return cut
        at, step = at + size, step + 1
    return None


def loop(prefix_len: int, unit_len: int, copies: int) -> list[int]:
    """Distinct prefix tokens, then one unit of distinct tokens repeated."""
    prefix = list(range(100_000, 100_000 + prefix_len))
    unit = list(range(1_000, 1_000 + unit_len))
    return prefix + unit * copies


# Ported from the rescanning `repetition_start` it replaces: same cuts with units up to 16.
def test_feed_single_token_loop_keeps_first_copy() -> None:
    assert feed_all(RepetitionGuard(16, 16), [1, 2, 3] + [7] * 16) == 4  # keep [1, 2, 3, 7]


def test_feed_single_token_needs_the_whole_span() -> None:
    assert feed_all(RepetitionGuard(16, 16), [1] + [7] * 15) is None


def test_feed_multi_token_unit_keeps_first_copy() -> None:
    tokens = [5, 6] + [10, 11, 12] * 6
    assert feed_all(RepetitionGuard(16, 16), tokens) == 5  # keep [5, 6, 10, 11, 12]


def test_feed_long_unit_three_copies() -> None:
    tokens = [1, 2] + list(range(100, 112)) * 3
    assert feed_all(RepetitionGuard(16, 16), tokens) == 2 + 12


def test_feed_walks_back_over_earlier_copies() -> None:
    assert feed_all(RepetitionGuard(16, 16), [9] + [4, 4] * 10) == 2  # keep [9, 4]


@pytest.mark.parametrize(
    "tokens",
    [
        list(range(60)),
        [1, 2, 1, 2, 1, 2, 3],
        list(range(20)) * 2,  # only two copies
        [3, 4, 5] * 5 + [6],  # the run ends before it is long enough
    ],
)
def test_feed_none_without_a_loop(tokens: list[int]) -> None:
    assert feed_all(RepetitionGuard(16, 16), tokens) is None


@pytest.mark.parametrize(("min_span", "max_unit"), [(0, 256), (1, 256), (16, 0)])
def test_feed_disabled_with_small_span_or_no_unit(min_span: int, max_unit: int) -> None:
    guard = RepetitionGuard(min_span, max_unit)
    assert feed_all(guard, [1] * 50) is None
    assert guard.tokens == [1] * 50


@pytest.mark.parametrize("sizes", CHUNKINGS)
@pytest.mark.parametrize(("unit_len", "copies"), [(1, 20), (12, 4), (40, 3), (200, 3)])
def test_feed_cuts_after_first_copy_whatever_the_chunking(
    unit_len: int, copies: int, sizes: list[int]
) -> None:
    tokens = [*loop(5, unit_len, copies), 7, 8, 9]
    assert feed_all(RepetitionGuard(16, 256), tokens, sizes) == 5 + unit_len


@pytest.mark.parametrize("sizes", CHUNKINGS)
def test_feed_unit_longer_than_max_unit_passes(sizes: list[int]) -> None:
    assert feed_all(RepetitionGuard(16, 256), loop(5, 300, 4), sizes) is None


def test_feed_fires_on_the_token_that_completes_the_run() -> None:
    guard = RepetitionGuard(16, 256)
    tokens = loop(5, 40, 3)
    assert feed_all(guard, tokens[:-1]) is None
    assert guard.feed(tokens[-1:]) == 45


def test_feed_reports_once_and_keeps_every_token() -> None:
    guard = RepetitionGuard(16, 256)
    tokens = loop(2, 12, 5)
    assert guard.feed(tokens) == 14
    assert guard.feed([1, 2]) is None
    assert guard.cut == 14
    assert guard.tokens == [*tokens, 1, 2]


@pytest.mark.parametrize("sizes", CHUNKINGS)
def test_feed_repeated_line_keeps_the_first(sizes: list[int]) -> None:
    first = [10, 11, NEWLINE]
    line = list(range(2_000, 2_030))  # a 30-token line, repeated with its newline
    tokens = first + [*line, NEWLINE] * 3
    cut = feed_all(RepetitionGuard(16, 256), tokens, sizes)
    assert tokens[:cut] == first + line  # the run starts at the newline before the line


@pytest.mark.parametrize("vocab", [150_000, 20])
def test_feed_no_false_positive_on_random_tokens(vocab: int) -> None:
    rng = random.Random(0)
    tokens = [rng.randrange(vocab) for _ in range(2000)]
    assert feed_all(RepetitionGuard(16, 256), tokens, [1]) is None
    assert feed_all(RepetitionGuard(16, 256), tokens, [7, 1, 13, 2]) is None


def test_feed_min_copies_allows_that_many_minus_one() -> None:
    tokens = loop(3, 12, 5)
    assert feed_all(RepetitionGuard(16, 256, min_copies=5), tokens[:-1]) is None
    assert feed_all(RepetitionGuard(16, 256, min_copies=5), tokens) == 15
    assert feed_all(RepetitionGuard(16, 256, min_copies=3), tokens) == 15


def test_feed_min_span_holds_back_short_units() -> None:
    # Eight copies of a 1-token unit ("ha ha ha ...") is fewer than 16 tokens.
    assert feed_all(RepetitionGuard(16, 256), [1, 2] + [5] * 8 + [3]) is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("The cat sat on the mat.", 1),
        ("你好", 1),
        ("Hello world.", 2),  # "ll"
        ("ha ha ha", 3),
        ("ha ha ha ha", 4),  # the last "ha" lacks its space, still a copy
        ("hahaha", 3),
        ("No, no, no, no", 3),  # ", no" three times; "No" differs
        ("Run, Forrest, run! Run, Forrest, run! Run, Forrest, run!", 3),
        ("加油加油加油！", 3),
        ("빠르게 빠르게 빠르게 달렸다", 3),
        ("Wait.... what? ---- Yes!!!!", 1),  # punctuation is not a word
        ("It cost 1000000 yen", 1),  # nor are digits
        ("", 1),
    ],
)
def test_source_copies_counts_repeated_units(text: str, expected: int) -> None:
    assert source_copies(text) == expected


def test_source_copies_ignores_units_longer_than_80_characters() -> None:
    sentence = "Every morning the baker rises before dawn, kneads his dough and sings to his cat. "
    assert len(sentence) > 80
    assert source_copies(sentence) == 1
    assert source_copies(sentence * 3) == 1


def test_source_copies_long_text_counts_a_repeated_line() -> None:
    text = " ".join(f"Item {i} weighs {i * 7} grams." for i in range(800))  # 20k characters
    chorus = "\nLa la land, here we come!" * 5
    assert source_copies(text) == 1
    assert source_copies(text[:10_000] + chorus + text[10_000:]) == 5


def test_source_copies_lets_the_source_repetition_through_the_guard() -> None:
    # "Non" then ", non" three times: the translation repeats as much as the source.
    tokens = [40, 41, 42, 41, 42, 41, 42, 43]
    copies = source_copies("No, no, no, no")
    assert feed_all(RepetitionGuard(2, 256, max(3, copies + 2)), tokens) is None
    assert feed_all(RepetitionGuard(2, 256, 3), tokens) == 3


def test_feed_keeps_as_many_copies_as_asked() -> None:
    tokens = loop(3, 12, 5)
    assert feed_all(RepetitionGuard(16, 256, min_copies=5, keep=3), tokens) == 3 + 3 * 12
    # Never more than the copies that make a loop less one.
    assert feed_all(RepetitionGuard(16, 256, min_copies=5, keep=9), tokens) == 3 + 4 * 12


def test_a_loop_past_a_repetitive_source_is_cut_back_to_its_copies() -> None:
    # Seen on the real engine: "Go team! " x 30 went on to the output budget, and the guard
    # cut it to "Go team! Go"; 20 repeated Korean clauses to Japanese came back as one.
    source = "Go team! " * 30
    assert source_copies(source) == 30
    tokens = loop(0, 4, 80)  # "Go", " team", "!", " " over and over
    assert feed_all(guard_for(source, 16, 512), tokens[: 4 * 31]) is None  # 30 + 1 pass
    assert feed_all(guard_for(source, 16, 512), tokens) == 30 * 4
    # A source that does not repeat keeps the first copy, as before.
    assert feed_all(guard_for("Go team!", 16, 512), tokens) == 4
