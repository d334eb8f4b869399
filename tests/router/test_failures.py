"""A backend that fails a request (500/502: its engine died under it, or a fault of its own) is
passed over for another, so the client still gets its translation; only when every backend
fails does the client see the failure. The proxy is the real `dragoman route` process; the
good backend is an echo-architecture server; the failing one is a small HTTP app in a thread
(an HTTP-layer double: what is under test is the proxy's handling of a 500)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import uvicorn
from fastapi.responses import PlainTextResponse

from dragoman.bench.servers import Launched, free_port, launch_echo
from tests.router._apps import checked_backend
from tests.router.test_routing import body, start


@pytest.fixture
def failing() -> Iterator[Launched]:
    """Healthy to the proxy's checks; answers every translation with uvicorn's bare 500 (what
    a server's shutdown sends for a request it cancelled)."""
    app = checked_backend()
    calls: list[int] = []

    @app.post("/v1/translate")
    async def translate() -> PlainTextResponse:
        calls.append(1)
        return PlainTextResponse("Internal Server Error", status_code=500)

    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{port}"
    for _ in range(200):
        if server.started:
            break
        threading.Event().wait(0.05)
    assert server.started, "the failing backend did not start"
    yield Launched(url, None, Path("/dev/null"))  # type: ignore[arg-type]  # no process: a thread
    server.should_exit = True
    thread.join(timeout=10)


async def test_a_failed_request_is_sent_to_another_backend(
    logs: Path, stop_all: list[Launched], failing: Launched
) -> None:
    good = launch_echo(logs, "en,fr", "--echo-delay", "0.01")
    stop_all.append(good)
    router = start(logs, stop_all, failing, good)
    async with httpx.AsyncClient(base_url=router.url, timeout=30) as c:
        rs = await asyncio.gather(*(c.post("/v1/translate", json=body(f"t{i}")) for i in range(8)))
        metrics = (await c.get("/metrics")).text
    assert [r.status_code for r in rs] == [200] * 8, [r.text for r in rs]
    assert {r.headers["x-dragoman-backend"] for r in rs} == {"b1"}
    # The failing backend was tried (the proxy does not know it fails until it answers).
    assert 'dragoman_router_backend_requests_total{backend="b0",status="500"}' in metrics
    assert "dragoman_router_retries_total 0.0" not in metrics


async def test_every_backend_failing_passes_the_failure_on(
    logs: Path, stop_all: list[Launched], failing: Launched
) -> None:
    router = start(logs, stop_all, failing)
    async with httpx.AsyncClient(base_url=router.url, timeout=30) as c:
        r = await c.post("/v1/translate", json=body("doomed"))
    assert r.status_code == 500, r.text
    assert r.headers["x-dragoman-backend"] == "b0"
