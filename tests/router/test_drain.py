"""SIGTERM on real servers (echo architecture): admitted work finishes, new work is told to go
elsewhere, the process exits 0; behind the proxy, clients see no failure at all."""

from __future__ import annotations

import asyncio
import signal
from pathlib import Path

import httpx
import pytest

from dragoman.bench.servers import Launched, launch_echo
from tests.router._wait import until
from tests.router.test_routing import body, start


async def test_sigterm_drains_admitted_requests_then_exits_0(
    logs: Path, stop_all: list[Launched]
) -> None:
    server = launch_echo(logs, "en,fr", "--echo-delay", "1", "--drain-seconds", "20")
    stop_all.append(server)
    async with httpx.AsyncClient(base_url=server.url, timeout=30) as c:
        held = [asyncio.create_task(c.post("/v1/translate", json=body(f"t{i}"))) for i in range(8)]
        await until(
            lambda: c.get("/ready"),
            lambda r: r.json().get("admitted_in_flight") == 8,
            "8 requests admitted",
        )
        server.process.send_signal(signal.SIGTERM)
        ready = await until(lambda: c.get("/ready"), lambda r: r.status_code == 503, "/ready 503")
        assert ready.json()["error"]["code"] == "draining"
        late = await c.post("/v1/translate", json=body("late"))
        assert late.status_code == 503
        assert late.json()["error"]["code"] == "draining"
        assert late.headers["retry-after"] == "5"
        assert [r.status_code for r in await asyncio.gather(*held)] == [200] * 8
    assert server.process.wait(timeout=30) == 0
    assert "drained: every admitted request answered" in server.log.read_text()


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
async def test_work_left_when_the_server_stops_is_answered_not_cut_off(
    logs: Path, stop_all: list[Launched], sig: signal.Signals
) -> None:
    """Past --drain-seconds (SIGTERM), or at once (SIGINT), what is still running is aborted
    and answered 503 `draining` in its surface's shape, with Retry-After: not cut off by the
    server's shutdown (uvicorn's bare 500 and a traceback each)."""
    # The server inherits SIGINT's disposition: ignored when this run is a background job,
    # and uvicorn re-raises the signal after its shutdown under it (exit 0, not 130).
    inherited = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        server = launch_echo(logs, "en,fr", "--echo-delay", "120", "--drain-seconds", "1")
    finally:
        signal.signal(signal.SIGINT, inherited)
    stop_all.append(server)
    async with httpx.AsyncClient(base_url=server.url, timeout=60) as c:
        held = [
            asyncio.create_task(c.post("/v1/translate", json=body("one"))),
            asyncio.create_task(c.post("/v2/translate", data={"text": "two", "target_lang": "FR"})),
            asyncio.create_task(
                c.post("/translate", json={"q": "three", "source": "en", "target": "fr"})
            ),
        ]
        await until(
            lambda: c.get("/ready"),
            lambda r: r.json().get("admitted_in_flight") == 3,
            "3 requests admitted",
            within=15,
        )
        server.process.send_signal(sig)
        native, deepl, libre = await asyncio.wait_for(asyncio.gather(*held), 60)
    for r in (native, deepl, libre):
        assert r.status_code == 503, r.text
        assert r.headers["retry-after"] == "5"
        assert r.headers["x-dragoman-error"] == "draining"
    assert native.json()["error"]["code"] == "draining"
    assert "shut down" in deepl.json()["message"]
    assert "shut down" in libre.json()["error"]
    assert server.process.wait(timeout=30) == (0 if sig == signal.SIGTERM else 130)
    log = server.log.read_text()
    assert "3 requests in flight aborted" in log
    assert "Traceback" not in log


async def test_sigterm_on_one_backend_under_load_loses_nothing(
    logs: Path, stop_all: list[Launched]
) -> None:
    backends = [launch_echo(logs, "en,fr", "--echo-delay", "0.1") for _ in range(2)]
    stop_all += backends
    router = start(logs, stop_all, *backends)
    statuses: list[int] = []
    warm = asyncio.Event()

    async def client(c: httpx.AsyncClient, n: int) -> None:
        for i in range(n):
            r = await c.post("/v1/translate", json=body(f"request {i}"))
            statuses.append(r.status_code)
            if len(statuses) >= 10:
                warm.set()

    async with httpx.AsyncClient(base_url=router.url, timeout=30) as c:
        load = asyncio.gather(*(client(c, 15) for _ in range(6)))  # 90 requests, bounded
        await asyncio.wait_for(warm.wait(), 30)
        backends[0].process.send_signal(signal.SIGTERM)
        await load
    assert statuses == [200] * 90
    assert backends[0].process.wait(timeout=30) == 0
