"""Deadlines over HTTP: header, body field, server default; 504 aborts the engine work; work
the queue cannot start in time is refused with 503."""

from __future__ import annotations

import asyncio
import re
import time

import pytest

from tests.fakes import FakeTranslator
from tests.unit.api.conftest import wait_for


def body(text: object, **extra: object) -> dict[str, object]:
    return {"text": text, "source_lang": "en", "target_lang": "fr", **extra}


def deadline_error(seconds: str, aborted: int, of: int) -> dict[str, object]:
    return {
        "error": {
            "code": "deadline_exceeded",
            "message": f"the request's deadline of {seconds} s passed; its unfinished texts "
            f"were aborted ({aborted} of {of})",
        }
    }


async def test_header_deadline_aborts_the_engine_requests_with_504(
    serve, fake: FakeTranslator
) -> None:  # type: ignore[no-untyped-def]
    fake.delay = 5
    async with serve() as (_app, c):
        started = time.perf_counter()
        r = await c.post(
            "/v1/translate", json=body(["a", "b", "c"]), headers={"X-Request-Timeout": "0.2"}
        )
        assert time.perf_counter() - started < 1.5
        assert r.status_code == 504
        assert r.json() == deadline_error("0.2", 3, 3)
        assert fake.cancelled == 3 and fake.running == 0
        metrics = (await c.get("/metrics")).text
    assert "dragoman_expired_total 1.0" in metrics
    assert "dragoman_aborted_total 3.0" in metrics
    assert "dragoman_admitted_in_flight 0.0" in metrics


async def test_body_timeout_and_header_the_shorter_wins(serve, fake: FakeTranslator) -> None:  # type: ignore[no-untyped-def]
    fake.delay = 5
    async with serve() as (_app, c):
        r = await c.post(
            "/v1/translate", json=body("a", timeout=0.2), headers={"X-Request-Timeout": "30"}
        )
        assert r.json() == deadline_error("0.2", 1, 1)
        r = await c.post(
            "/v1/translate", json=body("a", timeout=30), headers={"X-Request-Timeout": "0.1"}
        )
        assert r.json() == deadline_error("0.1", 1, 1)


async def test_server_default_applies_and_caps_what_clients_ask(
    serve, fake: FakeTranslator
) -> None:  # type: ignore[no-untyped-def]
    fake.delay = 5
    async with serve(request_timeout=0.2) as (_app, c):
        r = await c.post("/v1/translate", json=body("a"), headers={"X-Request-Timeout": "60"})
        assert r.status_code == 504
        assert r.json() == deadline_error("0.2", 1, 1)


async def test_work_finished_in_time_is_answered(serve, fake: FakeTranslator) -> None:  # type: ignore[no-untyped-def]
    fake.delay = 0.05
    async with serve() as (_app, c):
        r = await c.post("/v1/translate", json=body(["a", "b"]), headers={"X-Request-Timeout": "5"})
        assert r.status_code == 200


@pytest.mark.parametrize(
    ("headers", "payload", "message"),
    [
        (
            {"X-Request-Timeout": "soon"},
            body("a"),
            "X-Request-Timeout: must be a positive number of seconds, got 'soon'",
        ),
        (
            {"X-Request-Timeout": "0"},
            body("a"),
            "X-Request-Timeout: must be a positive number of seconds, got '0'",
        ),
        ({}, body("a", timeout=0), "timeout: Input should be greater than 0"),
        (
            {},
            body("a", timeout="x"),
            "timeout: Input should be a valid number, unable to parse string as a number",
        ),
    ],
)
async def test_bad_deadline_is_422(serve, headers, payload, message) -> None:  # type: ignore[no-untyped-def]
    async with serve() as (_app, c):
        r = await c.post("/v1/translate", json=payload, headers=headers)
    assert r.status_code == 422
    assert r.json() == {"error": {"code": "invalid_request", "message": message}}


async def test_deadline_the_queue_cannot_meet_is_refused_early_with_503(
    serve, fake: FakeTranslator
) -> None:  # type: ignore[no-untyped-def]
    async with serve(max_num_seqs=1, max_num_batched_tokens=256, max_admitted=0) as (_app, c):
        fake.delay = 5
        held = [asyncio.create_task(c.post("/v1/translate", json=body(f"t{i}"))) for i in range(6)]
        await wait_for(lambda: fake.running == 6)
        fake.delay = 0
        for n in range(4):  # 4 texts finish within the busy period: 4 a second
            # (different texts: a repeat would come from the cache, not the engine)
            assert (await c.post("/v1/translate", json=body(f"quick {n}"))).status_code == 200
        # 6 in flight, 1 runs: 5 wait, about 1.25 s at 4 a second.
        r = await c.post("/v1/translate", json=body("late"), headers={"X-Request-Timeout": "1"})
        assert r.status_code == 503
        assert r.json()["error"]["code"] == "deadline_unmeetable"
        assert re.fullmatch(
            r"the work queued ahead needs about 1\.2 s, more than the 1\.0 s left of this "
            r"request's deadline; retry later or allow more time",
            r.json()["error"]["message"],
        )
        assert r.headers["retry-after"] == "1"
        assert fake.started == 10  # never reached the engine
        r = await c.post("/v1/translate", json=body("patient"), headers={"X-Request-Timeout": "3"})
        assert r.status_code == 200
        for task in held:
            task.cancel()
        await asyncio.gather(*held, return_exceptions=True)
        metrics = (await c.get("/metrics")).text
    assert 'dragoman_rejected_total{reason="deadline_unmeetable"} 1.0' in metrics
