"""/v1/stats on a server: points made from the app's own registry, a sample at a time (the
tests call sample() themselves rather than wait for the once-a-second task)."""

from __future__ import annotations

import asyncio

import pytest

BODY = {"text": ["Good morning", "Good night"], "source_lang": "en", "target_lang": "fr"}


async def test_stats_rates_and_percentiles_follow_the_traffic(serve) -> None:  # type: ignore[no-untyped-def]
    async with serve() as (app, client):
        first = (await client.get("/v1/stats")).json()
        assert first["kind"] == "server"
        assert first["engine"] == "ready"
        assert first["model"] == "fake"
        assert first["engine_metrics"] is False  # the fake engine has no vLLM gauges
        assert first["points"] == []  # one sample so far: no rate yet
        await asyncio.gather(*(client.post("/v1/translate", json=BODY) for _ in range(3)))
        r = await client.post("/v1/translate", json={**BODY, "target_lang": "xx"})
        assert r.status_code == 400
        app.state.stats.sample()
        answer = (await client.get("/v1/stats")).json()
    [point] = answer["points"]
    assert point["requests_per_s"] > 0
    assert point["texts_per_s"] > 0
    assert point["output_tokens_per_s"] > 0
    assert point["in_flight"] == 0
    assert point["running"] == 0
    assert point["waiting"] is None and point["kv_cache_percent"] is None
    # The fake engine reports 1 ms queueing and 10 ms compute for every text.
    assert point["queue_p50"] == pytest.approx(0.001, abs=0.0015)
    assert 0.005 <= point["inference_p50"] <= 0.025
    assert point["latency_p99"] is not None
    assert 0 <= point["cpu_percent"] <= 100
    assert answer["totals"]["translations"] == 6
    assert answer["totals"]["admitted"] == 3
    assert answer["totals"]["aborted"] == 0


async def test_stats_since_returns_only_newer_points(serve) -> None:  # type: ignore[no-untyped-def]
    async with serve() as (app, client):
        app.state.stats.sample()
        app.state.stats.sample()
        points = (await client.get("/v1/stats")).json()["points"]
        assert len(points) == 2
        newer = (await client.get("/v1/stats", params={"since": points[0]["t"]})).json()
        assert newer["points"] == points[1:]


async def test_stats_need_the_metrics_key_when_one_is_set(serve) -> None:  # type: ignore[no-untyped-def]
    async with serve(metrics_key="m-secret") as (_, client):
        r = await client.get("/v1/stats")
        assert r.status_code == 401
        assert r.json()["error"]["code"] == "missing_api_key"
        r = await client.get("/v1/stats", headers={"Authorization": "Bearer nope"})
        assert r.status_code == 401
        r = await client.get("/v1/stats", headers={"Authorization": "Bearer m-secret"})
        assert r.status_code == 200
        assert (await client.get("/dashboard")).status_code == 200  # the page itself is open


async def test_pages_and_their_files_are_served_with_a_strict_policy(serve) -> None:  # type: ignore[no-untyped-def]
    async with serve() as (_, client):
        for path, marker in (("/", 'id="translate"'), ("/dashboard", 'id="charts"')):
            r = await client.get(path)
            assert r.status_code == 200
            assert r.headers["content-type"].startswith("text/html")
            assert marker in r.text
            assert r.headers["content-security-policy"].startswith("default-src 'self'")
        for name in ("style.css", "common.js", "translate.js", "charts.js", "dashboard.js"):
            assert (await client.get(f"/static/{name}")).status_code == 200
        assert (await client.get("/static/../settings.py")).status_code == 404
