"""The adversarial texts are built from a pattern's own tree: a quadratic pattern gets the
text that shows it, and a pattern only ever matched at a text's start is told apart."""

from __future__ import annotations

import re
import types

from dragoman.bench.redos import anchored_names, attacks, patterns_of, worst_seconds


def test_attacks_hold_a_run_two_neighbouring_quantifiers_both_take() -> None:
    printf = re.compile(r"%[-+\#0]*\d*(?:\.\d+)?[sd]")
    texts = attacks(printf, 1_000)
    assert any(t.startswith("%0000") and t.endswith("!") for t in texts)
    assert all(len(t) <= 1_002 for t in texts)


def test_attacks_reach_repetitions_inside_groups_branches_and_lookarounds() -> None:
    nested = re.compile(r"x(?:a|<\s*(?=q)/?\s*g)")
    texts = attacks(nested, 500)
    assert any(t.startswith("x< ") and t.count(" ") > 400 for t in texts)


def test_attacks_sample_negated_classes_and_categories() -> None:
    texts = attacks(re.compile(r"[^\n:]*\w+$"), 300)
    assert any(set(t[:-1]) == {"a"} for t in texts)


def test_attacks_pump_the_run_between_an_opener_and_what_ends_it() -> None:
    quadratic = re.compile(r"<\s*/?\s*g>")
    longest = max(attacks(quadratic, 1_000), key=len)
    assert longest.startswith("<") and set(longest[1:-1]) <= {" ", "\t", "\n"}


def test_patterns_of_finds_module_dict_and_tuple_patterns() -> None:
    module = types.ModuleType("m")
    module.ONE = re.compile("a")  # type: ignore[attr-defined]
    module.BY = {True: re.compile("b")}  # type: ignore[attr-defined]
    module.ROW = (re.compile("c"), "not a pattern")  # type: ignore[attr-defined]
    module.BYTES = re.compile(b"d")  # type: ignore[attr-defined]
    assert sorted(patterns_of([module])) == ["m.BY[True]", "m.ONE", "m.ROW[0]"]


def test_anchored_names_are_those_only_ever_matched_at_the_start() -> None:
    from dragoman.engine import hygiene

    anchored = anchored_names(hygiene)
    assert {"_PREAMBLE", "_LABEL", "_NOTE"} <= anchored
    assert "_PARAGRAPH_BREAK" not in anchored  # split: tried at every position


def test_worst_seconds_names_the_slowest_text() -> None:
    pattern = re.compile("a+b")
    took, text = worst_seconds(pattern, ["ab", "a" * 2_000], anchored=False)
    assert took > 0 and text == "a" * 2_000


def test_a_pattern_that_leads_another_s_alternation_is_tried_through_that_one() -> None:
    from dragoman.bench.redos import _led

    base, more = re.compile(r"a+b"), re.compile("a+b\n  | c+d")
    assert _led(base, [base, more])
    assert not _led(more, [base, more])
    assert not _led(re.compile("a+"), [re.compile("a+b")])  # a prefix, not whole branches
    assert not _led(base, [re.compile("a+b|c", re.IGNORECASE)])  # other flags
