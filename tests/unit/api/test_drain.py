"""Draining (what SIGTERM starts): readiness fails, new work gets 503, admitted work finishes."""

from __future__ import annotations

import asyncio

from tests.fakes import FakeTranslator
from tests.unit.api.conftest import wait_for

BODY = {"text": "hello", "source_lang": "en", "target_lang": "fr"}


async def test_draining_refuses_new_work_and_finishes_admitted(serve, fake: FakeTranslator) -> None:  # type: ignore[no-untyped-def]
    fake.delay = 0.3
    async with serve() as (app, c):
        # Three different texts: identical ones would share one engine request (coalescing).
        held = [
            asyncio.create_task(c.post("/v1/translate", json={**BODY, "text": f"hello {i}"}))
            for i in range(3)
        ]
        await wait_for(lambda: fake.running == 3)
        app.state.admission.drain()
        r = await c.get("/ready")
        assert r.status_code == 503
        assert r.json() == {"error": {"code": "draining", "message": "the server is shutting down"}}
        assert r.headers["retry-after"] == "5"
        r = await c.post("/v1/translate", json=BODY)
        assert r.status_code == 503
        assert r.json() == {
            "error": {"code": "draining", "message": "the server is shutting down; retry shortly"}
        }
        assert r.headers["retry-after"] == "5"
        # Draining comes first: even a bad request is told to go elsewhere.
        assert (
            await c.post("/v1/translate", json={**BODY, "target_lang": "xx"})
        ).status_code == 503
        assert (await c.get("/health")).status_code == 200  # alive: no restart mid-drain
        await asyncio.wait_for(app.state.admission.wait_idle(), 5)
        assert [t.status_code for t in await asyncio.gather(*held)] == [200] * 3
        metrics = (await c.get("/metrics")).text
    assert "dragoman_draining 1.0" in metrics
    assert 'dragoman_rejected_total{reason="draining"} 2.0' in metrics


async def test_dead_engine_is_noticed_without_traffic(serve, fake: FakeTranslator) -> None:  # type: ignore[no-untyped-def]
    async with serve(engine_check_interval=0.05) as (app, c):
        fake.dead = True
        await wait_for(lambda: app.state.engine_host.state == "failed")
        r = await c.get("/health")
        assert r.status_code == 503
        assert r.json()["error"]["code"] == "engine_dead"
