"""A backend's engine dies under load: its server says so and exits non-zero, and the proxy in
front sends its work to the other backend with no request failed. Real engines on 127.0.0.1;
the load is bounded in count and time; waits are on conditions with deadlines."""

from __future__ import annotations

import asyncio
import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import psutil
import pytest

from dragoman.bench.servers import Launched, launch_dragoman, launch_router
from tests.integration.conftest import Pace

pytestmark = pytest.mark.integration

_REQUESTS = "dragoman_router_backend_requests_total{"
SENTENCES = [
    "The museum opens at nine in the morning.",
    "Please close the window before you leave.",
    "Our train was delayed by twenty minutes.",
    "Thank you very much for your help.",
]


@pytest.fixture
def victim(tmp_path: Path) -> Iterator[Launched]:
    server = launch_dragoman(
        tmp_path, "--max-num-seqs", "4", "--engine-check-interval", "1", timeout=300
    )
    yield server
    server.stop()


def engine_core(server: Launched) -> psutil.Process:
    for child in psutil.Process(server.pid).children(recursive=True):
        if "EngineCore" in " ".join(child.cmdline()) or "EngineCore" in child.name():
            return child
    raise AssertionError("no EngineCore process under the server")


LONG = " ".join(SENTENCES * 3)  # long enough to be certainly in flight when the core dies


async def _in_flight(c: httpx.AsyncClient) -> int:
    return int((await c.get("/ready")).json().get("admitted_in_flight", 0))


async def test_killed_engine_fails_health_exits_nonzero_and_the_proxy_reroutes(
    live_server: Launched, victim: Launched, pace: Pace, tmp_path: Path
) -> None:
    router = launch_router(
        tmp_path,
        "--backend-urls",
        f"{victim.url},{live_server.url}",
        "--check-interval",
        "0.5",
    )
    try:
        total, clients = 24, 4
        statuses: list[int] = []
        killed = asyncio.Event()
        core = engine_core(victim)
        timeout = httpx.Timeout(pace.deadline(400))
        async with (
            httpx.AsyncClient(base_url=router.url, timeout=timeout) as c,
            httpx.AsyncClient(base_url=victim.url, timeout=timeout) as direct,
        ):

            async def healthy_both() -> bool:
                return all(b["healthy"] for b in (await c.get("/v1/backends")).json())

            end = time.monotonic() + pace.deadline(100)
            while not await healthy_both():
                assert time.monotonic() < end, "both backends never admitted"
                await asyncio.sleep(0.2)

            async def client(n: int) -> None:
                while len(statuses) < total or not killed.is_set():
                    body = {
                        "text": SENTENCES[(n + len(statuses)) % len(SENTENCES)],
                        "source_lang": "en",
                        "target_lang": "fr",
                    }
                    r = await c.post("/v1/translate", json=body)
                    statuses.append(r.status_code)

            async def in_flight_at_death() -> httpx.Response:
                """A request of the victim's own, in its engine when the core is killed."""
                body = {"text": LONG, "source_lang": "en", "target_lang": "de"}
                return await direct.post("/v1/translate", json=body)

            async def killer() -> None:
                end = time.monotonic() + pace.deadline(100)
                while await _in_flight(direct) < 1:
                    assert time.monotonic() < end, "the victim never had work in flight"
                    await asyncio.sleep(0.05)
                os.kill(core.pid, signal.SIGKILL)
                killed.set()

            waited = asyncio.ensure_future(in_flight_at_death())
            load = asyncio.gather(killer(), *(client(n) for n in range(clients)))
            await load
            hit = await waited
            metrics = (await c.get("/metrics")).text
        # Work in the engine when it died is answered 503 engine_dead (which a proxy retries),
        # not left waiting until the shutdown cancels it into a bare 500.
        assert hit.status_code == 503, (hit.status_code, hit.text)
        assert hit.json()["error"]["code"] == "engine_dead", hit.text
        assert statuses == [200] * len(statuses), statuses
        # Work did reach the dying backend (b0) and was sent on: its failures were seen.
        failed = [
            line
            for line in metrics.splitlines()
            if line.startswith(
                ("dragoman_router_backend_errors_total{", "dragoman_router_backend_requests_total{")
            )
            and 'backend="b0"' in line
            and 'status="200"' not in line
            and not line.endswith(" 0.0")
        ]
        assert failed, "no request met the dead engine: the test did not test rerouting"
        # The victim noticed (health 503 or already gone) and exits non-zero on its own.
        code = await asyncio.to_thread(victim.process.wait, pace.deadline(100))
        assert code not in (0, None), code
        assert "engine" in victim.log.read_text().lower()
    finally:
        router.stop()
