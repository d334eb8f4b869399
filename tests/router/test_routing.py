from __future__ import annotations

import asyncio
import collections
import os
import signal
from pathlib import Path

import httpx
import pytest

from dragoman.bench.servers import Launched, launch_echo, launch_router
from tests.router._wait import until, until_sync

CHECKS = ["--check-interval", "0.2", "--fail-threshold", "2", "--recover-threshold", "2"]


def body(text: str, target: str = "fr") -> dict[str, str]:
    return {"text": text, "source_lang": "en", "target_lang": target}


def start(
    logs: Path, stop_all: list[Launched], *backends: Launched, extra: tuple[str, ...] = ()
) -> Launched:
    urls = ",".join(b.url for b in backends)
    router = launch_router(logs, "--backend-urls", urls, *CHECKS, *extra)
    stop_all.append(router)
    # Wait until every backend is admitted (pairs learned, thresholds passed).
    key = extra[extra.index("--metrics-key") + 1] if "--metrics-key" in extra else None
    headers = {"Authorization": f"Bearer {key}"} if key else None
    until_sync(
        lambda: httpx.get(f"{router.url}/v1/backends", headers=headers).json(),
        lambda state: bool(state) and all(b["healthy"] for b in state),
        "every backend admitted by the router",
        within=20,
    )
    return router


def backend_of(r: httpx.Response, backends: list[Launched]) -> int:
    name = r.headers["x-dragoman-backend"]
    return int(name.removeprefix("b"))


async def test_routes_by_language_pair(logs: Path, stop_all: list[Launched]) -> None:
    fr = launch_echo(logs, "en,fr")
    de = launch_echo(logs, "en,de")
    stop_all += [fr, de]
    router = start(logs, stop_all, fr, de)
    async with httpx.AsyncClient(base_url=router.url) as c:
        for target, expected in (("fr", "b0"), ("de", "b1"), ("fr", "b0"), ("de", "b1")):
            r = await c.post("/v1/translate", json=body("hello", target))
            assert r.status_code == 200, r.text
            assert r.headers["x-dragoman-backend"] == expected
            assert r.json()["translations"][0]["text"] == "hello"
        pairs = (await c.get("/v1/languages")).json()["pairs"]
        assert {"source": "en", "target": "de", "backends": ["b1"]} in pairs


async def test_unknown_pair_400_and_bad_input_422(logs: Path, stop_all: list[Launched]) -> None:
    fr = launch_echo(logs, "en,fr")
    stop_all.append(fr)
    router = start(logs, stop_all, fr)
    async with httpx.AsyncClient(base_url=router.url) as c:
        r = await c.post("/v1/translate", json=body("hello", "ko"))
        assert r.status_code == 400
        assert r.json()["error"] == {
            "code": "unsupported_language",
            "message": "no backend serves en->ko",
        }
        r = await c.post("/v1/translate", json=body(""))
        assert r.status_code == 422
        assert r.json()["error"]["code"] == "empty_text"


async def test_least_outstanding_spreads_concurrent_load(
    logs: Path, stop_all: list[Launched]
) -> None:
    a = launch_echo(logs, "en,fr", "--echo-delay", "0.3")
    b = launch_echo(logs, "en,fr", "--echo-delay", "0.3")
    stop_all += [a, b]
    router = start(logs, stop_all, a, b)
    async with httpx.AsyncClient(base_url=router.url, timeout=30) as c:
        replies = await asyncio.gather(
            *(c.post("/v1/translate", json=body(f"t{i}")) for i in range(20))
        )
    counts = collections.Counter(r.headers["x-dragoman-backend"] for r in replies)
    assert all(r.status_code == 200 for r in replies)
    assert counts == {"b0": 10, "b1": 10}


async def test_slow_backend_gets_less_work(logs: Path, stop_all: list[Launched]) -> None:
    fast = launch_echo(logs, "en,fr", "--echo-delay", "0.05")
    slow = launch_echo(logs, "en,fr", "--echo-delay", "0.5")
    stop_all += [fast, slow]
    router = start(logs, stop_all, fast, slow)
    counts: collections.Counter[str] = collections.Counter()

    async def client(c: httpx.AsyncClient) -> None:
        for i in range(10):
            r = await c.post("/v1/translate", json=body(f"t{i}"))
            counts[r.headers["x-dragoman-backend"]] += 1

    async with httpx.AsyncClient(base_url=router.url, timeout=30) as c:
        await asyncio.gather(*(client(c) for _ in range(4)))
    assert counts["b0"] > 3 * counts["b1"]


async def test_backend_killed_under_load_every_request_answered_then_readmitted(
    logs: Path, stop_all: list[Launched]
) -> None:
    backends = [launch_echo(logs, "en,fr", "--echo-delay", "0.05") for _ in range(3)]
    stop_all += backends
    router = start(logs, stop_all, *backends)
    victim = backends[1]
    statuses: list[int] = []
    under_way = asyncio.Event()

    async def client(c: httpx.AsyncClient, n: int) -> None:
        for i in range(n):
            r = await c.post("/v1/translate", json=body(f"request {i}"))
            statuses.append(r.status_code)
            if len(statuses) >= 12:  # the load is under way
                under_way.set()

    async with httpx.AsyncClient(base_url=router.url, timeout=30) as c:
        load = asyncio.gather(*(client(c, 25) for _ in range(6)))  # 150 requests, bounded
        await asyncio.wait_for(under_way.wait(), 30)
        assert len(statuses) < 150  # killed with the load still running
        os.kill(victim.pid, signal.SIGKILL)  # no goodbye: connections just break
        await load
        assert statuses == [200] * 150
        state = {b["name"]: b for b in (await c.get("/v1/backends")).json()}
        assert state["b1"]["healthy"] is False
        metrics = (await c.get("/metrics")).text
        assert 'dragoman_router_backend_healthy{backend="b1"} 0.0' in metrics

        # Bring it back on the same port: health checks readmit it and it takes work again.
        port = int(victim.url.rsplit(":", 1)[1])
        revived = launch_echo(logs, "en,fr", "--echo-delay", "0.05", port=port)
        stop_all.append(revived)

        async def backend_state() -> dict[str, dict[str, object]]:
            return {b["name"]: b for b in (await c.get("/v1/backends")).json()}

        await until(backend_state, lambda s: s["b1"]["healthy"] is True, "b1 readmitted", within=20)
        replies = await asyncio.gather(
            *(c.post("/v1/translate", json=body(f"x{i}")) for i in range(30))
        )
        assert "b1" in {r.headers["x-dragoman-backend"] for r in replies}


async def test_no_healthy_backend_is_503(logs: Path, stop_all: list[Launched]) -> None:
    only = launch_echo(logs, "en,fr")
    stop_all.append(only)
    router = start(logs, stop_all, only)
    only.stop()
    async with httpx.AsyncClient(base_url=router.url) as c:
        ready = await until(
            lambda: c.get("/ready"), lambda r: r.status_code == 503, "/ready 503", within=10
        )
        assert ready.status_code == 503
        r = await c.post("/v1/translate", json=body("hello"))
        assert r.status_code == 503
        assert r.json()["error"] == {
            "code": "no_healthy_backend",
            "message": "no healthy backend serves en->fr; retry later",
        }
        assert (await c.get("/health")).status_code == 200


async def test_client_disconnect_closes_the_upstream_request(
    logs: Path, stop_all: list[Launched]
) -> None:
    slow = launch_echo(logs, "en,fr", "--echo-delay", "5")
    stop_all.append(slow)
    router = start(logs, stop_all, slow)
    async with httpx.AsyncClient(base_url=router.url, timeout=30) as c:
        call = asyncio.create_task(c.post("/v1/translate", json=body("bye")))

        async def outstanding() -> int:
            return int((await c.get("/v1/backends")).json()[0]["outstanding"])

        await until(outstanding, lambda n: n == 1, "the request outstanding upstream", within=4)
        assert not call.done()  # still waiting on its 5 s answer: the cancel cuts it short
        call.cancel()
        await asyncio.gather(call, return_exceptions=True)
        await until(outstanding, lambda n: n == 0, "the upstream request closed", within=3)
    # The backend saw its client (the proxy) leave, well before its 5 s answer.
    async with httpx.AsyncClient() as c:
        metrics = (await c.get(f"{slow.url}/metrics")).text
    assert 'route="/v1/translate",status="499"' in metrics


@pytest.mark.parametrize("args", [[], ["--backend-urls", ""]])
def test_route_without_backends_fails_loudly(args: list[str]) -> None:
    import subprocess
    import sys

    out = subprocess.run(
        [sys.executable, "-m", "dragoman", "route", *args],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 2
    assert "no backends" in out.stderr
