"""The in-process translation cache: its memory bound is the bytes it really holds."""

from __future__ import annotations

import gc
import tracemalloc

import pytest

from dragoman.engine.protocol import Translation
from dragoman.metrics import Metrics
from dragoman.service.cache import TranslationCache, as_hit

BOUND = 1 << 20


@pytest.mark.parametrize(("letter", "length"), [("x", 10), ("x", 200), ("中", 30)])
def test_the_memory_bound_holds_for_what_the_cache_really_allocates(
    letter: str, length: int
) -> None:
    # Counted as its text plus 200 bytes, an entry cost ~700: 2.5x --cache-mib for short texts.
    cache = TranslationCache(BOUND, "salt", Metrics())
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for i in range(40_000):
            text = f"{letter * length} {i}"
            reply = Translation(text + ".", "stop", 1000 + i, 2000 + i, 0.5 + i, 1.5 + i)
            cache.put(cache.key("model", "en", "fr", text), reply)
        gc.collect()
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert held <= BOUND * 1.05, f"{held / BOUND:.2f}x the bound"
    assert held >= BOUND * 0.5  # and it is used


def test_a_hit_is_the_text_and_its_tokens_with_no_engine_work() -> None:
    """A hit reports the tokens the translation cost (it answered 0: another caller's
    translation showed through the usage)."""
    cache = TranslationCache(BOUND, "salt", Metrics())
    key = cache.key("model", "en", "fr", "Hello.")
    cache.put(key, Translation("Bonjour.", "stop", 12, 4, 0.2, 0.3))
    assert cache.get(key) == Translation("Bonjour.", "stop", 12, 4, 0.0, 0.0, cached=True)
    assert [as_hit(entry) for entry in cache.get_all([key]) or []] == [cache.get(key)]
    cache.put(cache.key("model", "en", "fr", "Cut."), Translation("Cou", "length", 3, 9, 0, 1))
    assert cache.get(cache.key("model", "en", "fr", "Cut.")) is None


@pytest.mark.parametrize("entry", ["Bonjour.", "12\x1fBonjour.", "a b\x1fBonjour."])
def test_a_value_that_is_no_entry_is_refused(entry: str) -> None:
    """A shared store's value written otherwise reads as a miss (`fetch`), not as a hit."""
    with pytest.raises(ValueError):
        as_hit(entry)
