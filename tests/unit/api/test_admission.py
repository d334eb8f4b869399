"""Admission control over HTTP: the bound, 429 with Retry-After, whole lists, no drops."""

from __future__ import annotations

import asyncio
import time

from tests.fakes import FakeTranslator
from tests.unit.api.conftest import wait_for
from tests.unit.service.test_admission import Clock


def body(text: object) -> dict[str, object]:
    return {"text": text, "source_lang": "en", "target_lang": "fr"}


async def test_past_the_bound_429_at_once_and_admitted_requests_all_answered(
    serve, fake: FakeTranslator
) -> None:  # type: ignore[no-untyped-def]
    fake.delay = 0.5
    async with serve(max_admitted=4) as (_app, c):
        held = [asyncio.create_task(c.post("/v1/translate", json=body(f"t{i}"))) for i in range(4)]
        await wait_for(lambda: fake.running == 4)
        started = time.perf_counter()
        r = await c.post("/v1/translate", json=body("one too many"))
        assert time.perf_counter() - started < 0.1
        assert r.status_code == 429
        assert r.json() == {
            "error": {
                "code": "overloaded",
                "message": "the server is at its limit of 4 texts in flight; retry later",
            }
        }
        assert r.headers["retry-after"] == "1"  # nothing finished yet to measure a rate on
        assert fake.started == 4
        assert [t.status_code for t in await asyncio.gather(*held)] == [200] * 4
        metrics = (await c.get("/metrics")).text
    assert 'dragoman_rejected_total{reason="overloaded"} 1.0' in metrics
    assert "dragoman_admitted_total 4.0" in metrics
    assert "dragoman_admitted_in_flight 0.0" in metrics
    assert "dragoman_admission_limit 4.0" in metrics


async def test_a_list_is_admitted_whole_or_not_at_all(serve, fake: FakeTranslator) -> None:  # type: ignore[no-untyped-def]
    fake.delay = 0.5
    async with serve(max_admitted=4) as (_app, c):
        held = asyncio.create_task(c.post("/v1/translate", json=body(["a", "b", "c"])))
        await wait_for(lambda: fake.running == 3)
        r = await c.post("/v1/translate", json=body(["d", "e"]))
        assert r.status_code == 429
        assert fake.started == 3  # no part of the refused list reached the engine
        r = await c.post("/v1/translate", json=body(["f"]))
        assert r.status_code == 200
        assert (await held).status_code == 200


async def test_retry_after_comes_from_the_drain_rate(serve, fake: FakeTranslator) -> None:  # type: ignore[no-untyped-def]
    async with serve(max_admitted=4) as (app, c):
        # The admission's clock is the test's: the rate does not depend on the host's speed.
        clock = Clock()
        app.state.admission._clock = clock
        fake.gate = asyncio.Event()
        held = [asyncio.create_task(c.post("/v1/translate", json=body(f"t{i}"))) for i in range(4)]
        await wait_for(lambda: fake.running == 4)  # the server is full
        clock.now += 8
        fake.gate.set()  # the four finish together in the full engine in 8 s: 0.5 a second
        assert [r.status_code for r in await asyncio.gather(*held)] == [200] * 4
        fake.gate = asyncio.Event()
        held = [asyncio.create_task(c.post("/v1/translate", json=body(f"u{i}"))) for i in range(4)]
        await wait_for(lambda: fake.running == 4)
        r = await c.post("/v1/translate", json=body(["x", "y"]))
        assert r.status_code == 429
        assert r.headers["retry-after"] == "4"  # 2 places at 0.5 a second
        fake.gate.set()
        assert [r.status_code for r in await asyncio.gather(*held)] == [200] * 4


async def test_a_cached_answer_takes_no_place(serve, fake: FakeTranslator) -> None:  # type: ignore[no-untyped-def]
    async with serve(max_admitted=4) as (_app, c):
        assert (await c.post("/v1/translate", json=body("cached"))).status_code == 200
        fake.delay = 5
        held = [asyncio.create_task(c.post("/v1/translate", json=body(f"t{i}"))) for i in range(4)]
        await wait_for(lambda: fake.running == 4)
        for _ in range(3):  # the bound is full; a repeat is answered all the same
            assert (await c.post("/v1/translate", json=body("cached"))).status_code == 200
        assert fake.started == 5  # the repeats did no engine work
        assert (await c.post("/v1/translate", json=body("new"))).status_code == 429
        for task in held:
            task.cancel()
        await asyncio.gather(*held, return_exceptions=True)


async def test_zero_means_no_bound(serve, fake: FakeTranslator) -> None:  # type: ignore[no-untyped-def]
    fake.delay = 0.2
    async with serve(max_admitted=0) as (_app, c):
        replies = await asyncio.gather(
            *(c.post("/v1/translate", json=body(["a", "b", "c", "d"])) for _ in range(50))
        )
    assert {r.status_code for r in replies} == {200}
