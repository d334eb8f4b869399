"""Every pattern that sees request text or model output (text/, detect/, engine/, service/,
api/) runs in time linear in its text: on texts built from its own tree to make it backtrack
(`bench.redos.attacks`), at the longest text a server admits, each finishes well under a
second. A quadratic pattern takes minutes there, so the margin does not depend on the host."""

from __future__ import annotations

import pytest

from dragoman.bench.hostile import SIZE, best_seconds, families, plain
from dragoman.bench.redos import attacks, request_patterns, worst_seconds

LIMIT_S = 1.0
PATTERNS = request_patterns()


def test_the_request_path_patterns_are_all_collected() -> None:
    names = set(PATTERNS)
    for expected in (
        "dragoman.detect._clean._NOT_LANGUAGE",
        "dragoman.text.placeholders._PATTERNS[(True, True)]",
        "dragoman.text.markup.markers._MARKER",
        "dragoman.engine.hygiene._PREAMBLE",
        "dragoman.service.validate._TOKENS",
        "dragoman.api.edge._VALID_ID",
    ):
        assert expected in names
    assert len(PATTERNS) >= 50


@pytest.mark.parametrize("name", sorted(PATTERNS))
def test_pattern_reads_its_adversarial_texts_in_linear_time(name: str) -> None:
    pattern, anchored = PATTERNS[name]
    took, text = worst_seconds(pattern, attacks(pattern, SIZE), anchored)
    if took >= LIMIT_S:  # once more, alone: a pause of the machine is not the pattern's
        took = worst_seconds(pattern, [text], anchored)[0]
    assert took < LIMIT_S, f"{name} took {took:.2f} s on {text[:40]!r}... ({len(text)} chars)"


@pytest.mark.parametrize("family", sorted(families(1_000)))
def test_the_text_work_of_a_hostile_text_stays_within_a_few_plain_texts(family: str) -> None:
    # The request path's own work (letters, segments, masks, markup, reply cleaning) on a
    # crafted text against ordinary prose of the same length, in one process: the committed
    # bench holds the 2x target; here only what no pause of the machine reaches.
    text = families(SIZE)[family]
    for markup in (False, True):
        took = best_seconds(1, text, markup)
        if took > 1.0:
            plain_s = best_seconds(1, plain(SIZE), markup)
            took = best_seconds(2, text, markup)
            assert took < 4 * plain_s, f"{family} ({markup=}): {took:.2f} s, plain {plain_s:.2f}"
