"""Draining (what SIGTERM starts): readiness fails, new work gets 503, admitted work finishes."""

from __future__ import annotations

import asyncio
import json

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


async def test_work_still_running_when_the_server_stops_is_answered_503_in_each_shape(
    serve, fake: FakeTranslator
) -> None:  # type: ignore[no-untyped-def]
    """Past the drain (or on an interrupt) the server aborts what is left: each request gets
    its surface's 503 `draining` with Retry-After (a client or the proxy goes elsewhere), not
    a cut connection or a bare 500; the engine work is cancelled."""
    fake.delay = 60
    async with serve() as (app, c):
        held = {
            "native": c.post("/v1/translate", json={**BODY, "text": "one"}),
            "deepl": c.post(
                "/v2/translate", json={"text": ["two"], "source_lang": "EN", "target_lang": "FR"}
            ),
            "libretranslate": c.post(
                "/translate", json={"q": "three", "source": "en", "target": "fr"}
            ),
            "openai": c.post(
                "/v1/chat/completions",
                json={"model": "fake", "messages": [{"role": "user", "content": "four"}]},
            ),
        }
        tasks = {k: asyncio.create_task(v) for k, v in held.items()}
        await wait_for(lambda: fake.running == 4)
        assert app.state.admission.abort() == 4
        answers = {k: await asyncio.wait_for(t, 5) for k, t in tasks.items()}
        await wait_for(lambda: fake.running == 0)  # the engine work was cancelled
        assert app.state.admission.in_flight == 0
        assert (await c.post("/v1/translate", json=BODY)).status_code == 503
    for surface, r in answers.items():
        assert r.status_code == 503, (surface, r.text)
        assert r.headers["retry-after"] == "5", surface
        assert r.headers["x-dragoman-error"] == "draining", surface
    assert answers["native"].json()["error"]["code"] == "draining"
    assert "shut down" in answers["deepl"].json()["message"]
    assert "shut down" in answers["libretranslate"].json()["error"]
    assert answers["openai"].json()["error"]["type"] == "server_error"


async def test_a_chat_stream_running_when_the_server_stops_ends_with_an_error_event(
    serve, fake: FakeTranslator
) -> None:  # type: ignore[no-untyped-def]
    fake.delay = 0.05  # a token every 50 ms: the stream is running when the server stops
    fake.chat_reply = " ".join(["word"] * 2000)
    async with serve() as (app, c):
        body = {"model": "fake", "stream": True, "messages": [{"role": "user", "content": "hi"}]}
        # (the test transport hands the body over once the stream has ended)
        streaming = asyncio.create_task(c.post("/v1/chat/completions", json=body))
        await wait_for(lambda: fake.running == 1)
        assert app.state.admission.abort() == 1
        r = await asyncio.wait_for(streaming, 10)
        await wait_for(lambda: fake.running == 0)
        assert app.state.admission.in_flight == 0
    assert r.status_code == 200
    events = [line for line in r.text.splitlines() if line.startswith("data: ")]
    assert events[-1] == "data: [DONE]"
    error = json.loads(events[-2].removeprefix("data: "))
    assert error["error"]["code"] == "draining"
    assert fake.cancelled == 1
