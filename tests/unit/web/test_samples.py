from __future__ import annotations

import math

import pytest
from prometheus_client import CollectorRegistry, Counter, Histogram

from dragoman.web import _samples as s


def test_quantile_interpolates_within_the_bucket_like_prometheus() -> None:
    then = {0.1: 0.0, 1.0: 0.0, math.inf: 0.0}
    now = {0.1: 10.0, 1.0: 20.0, math.inf: 20.0}  # 10 under 0.1 s, 10 between 0.1 and 1 s
    assert s.quantile(0.5, now, then) == pytest.approx(0.1)
    assert s.quantile(0.75, now, then) == pytest.approx(0.55)
    assert s.quantile(0.25, now, then) == pytest.approx(0.05)


def test_quantile_of_the_window_only_and_none_when_nothing_was_observed() -> None:
    then = {0.1: 10.0, 1.0: 10.0, math.inf: 10.0}
    assert s.quantile(0.5, then, then) is None
    now = {0.1: 10.0, 1.0: 14.0, math.inf: 14.0}  # the 4 new ones all between 0.1 and 1
    assert s.quantile(0.5, now, then) == pytest.approx(0.55)


def test_quantile_past_the_last_finite_bound_answers_that_bound() -> None:
    now = {0.1: 0.0, 1.0: 0.0, math.inf: 3.0}
    assert s.quantile(0.99, now, {}) == 1.0


def test_read_sums_series_matching_labels_and_skips_other_families() -> None:
    r = CollectorRegistry()
    c = Counter("app_things_total", "t", ["kind"], registry=r)
    Counter("other_total", "o", registry=r).inc(5)
    h = Histogram("app_seconds", "h", ["route"], buckets=(0.1, 1.0), registry=r)
    c.labels("a").inc(2)
    c.labels("b").inc(3)
    h.labels("/x").observe(0.05)
    h.labels("/y").observe(0.5)
    raw = s.read([r], ("app_",))
    assert s.total(raw, "app_things_total") == 5
    assert s.total(raw, "app_things_total", kind=["b"]) == 3
    assert s.total(raw, "other_total") is None
    assert s.by_label(raw, "app_things_total", "kind") == {"a": 2, "b": 3}
    assert s.buckets(raw, "app_seconds", route=["/x"]) == {0.1: 1, 1.0: 1, math.inf: 1}
    assert s.buckets(raw, "app_seconds") == {0.1: 1, 1.0: 2, math.inf: 2}
