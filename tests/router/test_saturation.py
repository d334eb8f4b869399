"""Backpressure through the proxy: a backend answering 429 (at its admission limit) or 503
(draining) is passed over for another; the client sees 429 only when every candidate is full.
Real processes on 127.0.0.1: `dragoman route` over echo-architecture servers."""

from __future__ import annotations

import asyncio
import signal
from pathlib import Path

import httpx

from dragoman.bench.servers import Launched, launch_echo
from tests.router.test_routing import body, start

# One text a request, at most two admitted: a backend is full after two slow requests.
SMALL = ("--max-items", "1", "--max-admitted", "2")


async def wait_until(check, within: float = 10.0) -> None:  # type: ignore[no-untyped-def]
    loop = asyncio.get_running_loop()
    end = loop.time() + within
    while not await check():
        assert loop.time() < end, "condition not met in time"
        await asyncio.sleep(0.05)


async def fill(
    c: httpx.AsyncClient, backend: Launched, n: int = 2
) -> list[asyncio.Task[httpx.Response]]:
    """Occupy `backend` directly (behind the proxy's back) until it is at its limit."""
    held = [
        asyncio.create_task(c.post(f"{backend.url}/v1/translate", json=body(f"held {i}")))
        for i in range(n)
    ]

    async def full() -> bool:
        return bool((await c.get(f"{backend.url}/ready")).json()["admitted_in_flight"] == n)

    await wait_until(full)
    return held


async def test_a_full_backend_is_passed_over_for_another(
    logs: Path, stop_all: list[Launched]
) -> None:
    a = launch_echo(logs, "en,fr", *SMALL, "--echo-delay", "3")
    b = launch_echo(logs, "en,fr", *SMALL, "--echo-delay", "0.05")
    stop_all += [a, b]
    router = start(logs, stop_all, a, b)
    async with httpx.AsyncClient(timeout=30) as c:
        held = await fill(c, a)
        # The proxy sees no load on b0 (the first configured), so it tries b0 first: 429.
        r = await c.post(f"{router.url}/v1/translate", json=body("routed"))
        assert r.status_code == 200, r.text
        assert r.headers["x-dragoman-backend"] == "b1"
        metrics = (await c.get(f"{router.url}/metrics")).text
        assert 'dragoman_router_backend_requests_total{backend="b0",status="429"} 1.0' in metrics
        assert "dragoman_router_retries_total 1.0" in metrics
        backends = {x["name"]: x for x in (await c.get(f"{router.url}/v1/backends")).json()}
        assert backends["b0"]["healthy"]  # full is not unhealthy
        assert [t.status_code for t in await asyncio.gather(*held)] == [200, 200]


async def test_429_passes_on_only_when_every_backend_is_full(
    logs: Path, stop_all: list[Launched]
) -> None:
    a = launch_echo(logs, "en,fr", *SMALL, "--echo-delay", "3")
    b = launch_echo(logs, "en,fr", *SMALL, "--echo-delay", "3")
    stop_all += [a, b]
    router = start(logs, stop_all, a, b)
    async with httpx.AsyncClient(timeout=30) as c:
        held = await fill(c, a) + await fill(c, b)
        r = await c.post(f"{router.url}/v1/translate", json=body("no room"))
        assert r.status_code == 429
        assert r.json()["error"] == {
            "code": "overloaded",
            "message": "the server is at its limit of 2 texts in flight; retry later",
        }
        assert int(r.headers["retry-after"]) >= 1
        assert "x-request-id" in r.headers
        for task in held:
            task.cancel()
        await asyncio.gather(*held, return_exceptions=True)


async def test_a_draining_backend_is_ejected_and_its_work_finishes(
    logs: Path, stop_all: list[Launched]
) -> None:
    a = launch_echo(logs, "en,fr", "--echo-delay", "1.5")
    b = launch_echo(logs, "en,fr", "--echo-delay", "0.05")
    stop_all += [a, b]
    router = start(logs, stop_all, a, b)
    async with httpx.AsyncClient(timeout=30) as c:
        held = await fill(c, a)
        a.process.send_signal(signal.SIGTERM)

        async def draining() -> bool:
            return (await c.get(f"{a.url}/ready")).status_code == 503

        await wait_until(draining)
        r = await c.post(f"{router.url}/v1/translate", json=body("elsewhere"))
        assert r.status_code == 200
        assert r.headers["x-dragoman-backend"] == "b1"
        backends = {x["name"]: x for x in (await c.get(f"{router.url}/v1/backends")).json()}
        assert not backends["b0"]["healthy"]  # out at once, not after failed checks
        assert [t.status_code for t in await asyncio.gather(*held)] == [200, 200]
    assert a.process.wait(timeout=30) == 0
