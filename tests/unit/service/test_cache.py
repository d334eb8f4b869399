"""The in-process translation cache: its memory bound is the bytes it really holds."""

from __future__ import annotations

import gc
import tracemalloc

import pytest

from dragoman.engine.protocol import Translation
from dragoman.metrics import Metrics
from dragoman.service.cache import TranslationCache

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


def test_a_hit_is_the_text_with_no_engine_work() -> None:
    cache = TranslationCache(BOUND, "salt", Metrics())
    key = cache.key("model", "en", "fr", "Hello.")
    cache.put(key, Translation("Bonjour.", "stop", 12, 4, 0.2, 0.3))
    assert cache.get(key) == Translation("Bonjour.", "stop", 0, 0, 0.0, 0.0)
    assert cache.get_all([key]) == ["Bonjour."]
    cache.put(cache.key("model", "en", "fr", "Cut."), Translation("Cou", "length", 3, 9, 0, 1))
    assert cache.get(cache.key("model", "en", "fr", "Cut.")) is None
