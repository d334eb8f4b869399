from __future__ import annotations

import math

from dragoman.stats import percentile


def test_percentile_interpolates() -> None:
    assert percentile([1, 2, 3, 4], 50) == 2.5
    assert percentile([5], 99) == 5
    assert percentile(list(range(101)), 99) == 99
    assert math.isnan(percentile([], 50))
