from __future__ import annotations

import collections

import pytest

from dragoman.eval import workloads as w


def test_catalogue_pairs_are_real_human_translations() -> None:
    pairs = dict(w.catalogue_pairs("django", "fr"))
    assert len(pairs) > 300
    assert pairs["This field is required."] == "Ce champ est obligatoire."
    assert len(w.catalogue_pairs("sphinx", "ko")) > 300


def test_bible_is_the_world_english_bible_in_order() -> None:
    verses = w.bible_verses()
    assert len(verses) == 31102
    assert verses[0] == "In the beginning God created the heavens and the earth."
    assert "`" not in verses[1]


@pytest.mark.parametrize("name", w.WORKLOADS)
def test_workloads_repeat_exactly_for_a_seed(name: str) -> None:
    assert w.build(name, 50, seed=3) == w.build(name, 50, seed=3)
    assert w.build(name, 50, seed=3) != w.build(name, 50, seed=4)


def test_uniform_has_one_sentence_length() -> None:
    tokens = [i.approx_tokens for i in w.uniform(300)]
    assert min(tokens) >= 23
    assert max(tokens) <= 29


def test_variable_mixes_short_and_long_in_10_to_200_tokens() -> None:
    items = w.variable(400)
    tokens = sorted(i.approx_tokens for i in items)
    assert tokens[len(tokens) // 10] <= 20  # many short
    assert tokens[-len(tokens) // 10] >= 100  # some long
    assert max(tokens) <= 240
    assert sum(1 for t in tokens if t < 8) < len(tokens) * 0.05
    kinds = collections.Counter(i.kind for i in items)
    assert kinds["ui"] > 20
    assert kinds["verse"] > 200
    assert all(i.reference for i in items if i.kind == "ui")


def test_targets_are_mixed_as_a_service_sees_them() -> None:
    counts = collections.Counter(i.target for i in w.variable(1000))
    assert set(counts) == set(w.TARGET_MIX)
    for lang, share in w.TARGET_MIX.items():
        assert abs(counts[lang] / 1000 - share) < 0.05


def test_unknown_workload() -> None:
    with pytest.raises(ValueError, match="unknown workload 'x'"):
        w.build("x", 1)
