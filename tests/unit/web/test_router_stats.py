from __future__ import annotations

from dragoman.metrics import RouterMetrics
from dragoman.router.backends import Backend, Pool
from dragoman.web.stats import RouterStats


def test_router_stats_give_every_backends_state_rate_and_latency() -> None:
    metrics = RouterMetrics()
    pool = Pool([Backend("b0", "http://a"), Backend("b1", "http://b")], 2, 2)
    pool.backends[0].healthy = True
    pool.backends[0].outstanding = 3
    stats = RouterStats(metrics, pool)
    stats.sample()
    for _ in range(4):
        metrics.upstream.labels("b0", "200").inc()
        metrics.upstream_latency.labels("b0").observe(0.3)
        metrics.http.requests.labels("/v1/translate", "POST", "200").inc()
    metrics.http.requests.labels("/health", "GET", "200").inc()  # not work: not counted
    metrics.retries.inc()
    stats.sample()
    answer = stats.answer(None)
    assert answer["kind"] == "router"
    assert [b["name"] for b in answer["backends"]] == ["b0", "b1"]
    assert answer["backends"][0]["healthy"] is True
    assert answer["totals"] == {"requests": 4, "rejected": {}, "retries": 1}
    [point] = answer["points"]
    b0, b1 = point["backends"]["b0"], point["backends"]["b1"]
    assert b0["requests_per_s"] > 0 and b1["requests_per_s"] == 0
    assert b0["outstanding"] == 3 and b1["healthy"] is False
    assert 0.25 <= b0["latency_p50"] <= 0.5
    assert b1["latency_p50"] is None
    assert point["requests_per_s"] > 0 and point["retries_per_s"] > 0
