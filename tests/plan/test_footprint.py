from __future__ import annotations

import psutil

from dragoman.plan.footprint import tree_memory


def test_tree_memory_sums_the_processes_it_is_given() -> None:
    me = psutil.Process()
    rss, pss, n = tree_memory(me, include_root=True)
    assert n >= 1 and rss >= me.memory_info().rss / 2**20 * 0.5 and 0 < pss <= rss
    assert tree_memory(me)[2] == n - 1
