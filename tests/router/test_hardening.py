"""The proxy against what a hostile client or a broken backend does (found by fuzzing the
real `dragoman route`): each test runs the real proxy process over echo-architecture servers;
a backend that must misbehave (malformed languages, a hang) is a small HTTP app in a thread (an
HTTP-layer double: what is under test is the proxy)."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn
from fastapi import FastAPI
from fastapi.responses import JSONResponse, StreamingResponse

from dragoman.bench.servers import Launched, free_port, launch_echo, launch_router
from tests.router._apps import checked_backend
from tests.router.test_routing import CHECKS, body, start

GERMAN = "Guten Morgen, wie geht es dir heute? Ich habe heute leider keine Zeit."


def backends(router: Launched) -> dict[str, dict[str, Any]]:
    return {b["name"]: b for b in httpx.get(f"{router.url}/v1/backends").json()}


def wait_until(check: Callable[[], bool], seconds: float = 30) -> None:
    end = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < end, "the condition did not come true in time"
        time.sleep(0.05)


@pytest.fixture
def fake() -> Iterator[Callable[[FastAPI], str]]:
    """Serve an app in a thread; returns its URL."""
    servers: list[tuple[uvicorn.Server, threading.Thread]] = []

    def serve(app: FastAPI) -> str:
        port = free_port()
        server = uvicorn.Server(
            uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning")
        )
        thread = threading.Thread(target=server.run, daemon=True)
        thread.start()
        servers.append((server, thread))
        wait_until(lambda: server.started, 20)
        return f"http://127.0.0.1:{port}"

    yield serve
    for server, thread in servers:
        server.should_exit = True
        thread.join(timeout=10)


def launch_unready_router(logs: Path, urls: str) -> Launched:
    """`dragoman route` over backends none of which is up: waited on /health, not /ready."""
    port = free_port()
    log = logs / f"route-{port}.log"
    cmd = [sys.executable, "-m", "dragoman", "route", "--port", str(port), "--backend-urls"]
    with log.open("wb") as out:
        process = subprocess.Popen(
            [*cmd, urls, *CHECKS], stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )
    router = Launched(f"http://127.0.0.1:{port}", process, log)

    def up() -> bool:
        try:
            return httpx.get(f"{router.url}/health").status_code == 200
        except httpx.TransportError:
            return False

    wait_until(up)
    return router


def _raw_post(url: str, header: bytes, payload: bytes) -> int:
    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=30) as s:
        s.sendall(
            b"POST /v1/translate HTTP/1.1\r\nHost: "
            + f"{host}:{port}".encode()
            + b"\r\nContent-Type: application/json\r\n"
            + header
            + b"\r\nContent-Length: "
            + str(len(payload)).encode()
            + b"\r\nConnection: close\r\n\r\n"
            + payload
        )
        return int(s.recv(64).split(b" ")[1])


def test_a_header_byte_past_ascii_is_relayed_and_frees_its_place(
    logs: Path, stop_all: list[Launched]
) -> None:
    """It was a 500 that kept the backend's in-flight count: 128 of them wedged the proxy."""
    backend = launch_echo(logs, "en,fr")
    stop_all.append(backend)
    router = start(logs, stop_all, backend, extra=("--max-in-flight", "2"))
    payload = b'{"text": "hello", "source_lang": "en", "target_lang": "fr"}'
    statuses = [_raw_post(router.url, b"Accept: text/\xe9t\xe9", payload) for _ in range(4)]
    assert statuses == [200] * 4
    assert backends(router)["b0"]["outstanding"] == 0
    assert httpx.post(f"{router.url}/v1/translate", json=body("next")).status_code == 200


async def test_a_clients_own_deadline_ejects_no_backend(
    logs: Path, stop_all: list[Launched]
) -> None:
    backend = launch_echo(logs, "en,fr", "--echo-delay", "1")
    stop_all.append(backend)
    router = start(logs, stop_all, backend)
    async with httpx.AsyncClient(base_url=router.url, timeout=30) as c:
        short = {"X-Request-Timeout": "0.05"}
        for i in range(4):
            r = await c.post("/v1/translate", json=body(f"poison {i}"), headers=short)
            assert r.status_code == 504, r.text
            assert r.json()["error"]["code"] == "deadline_exceeded"
        assert backends(router)["b0"]["healthy"]
        r = await c.post("/v1/translate", json=body("an innocent request"))
        assert r.status_code == 200, r.text


async def test_a_hung_backend_holds_a_request_no_longer_than_its_deadline(
    logs: Path, stop_all: list[Launched], fake: Callable[[FastAPI], str]
) -> None:
    app = checked_backend()
    release = asyncio.Event()

    @app.post("/v1/translate")
    async def hang() -> JSONResponse:
        await release.wait()  # never set: a hung engine
        return JSONResponse({})

    url = fake(app)
    router = start(logs, stop_all, Launched(url, None, Path("/dev/null")))  # type: ignore[arg-type]
    async with httpx.AsyncClient(base_url=router.url, timeout=60) as c:
        r = await c.post("/v1/translate", json=body("hi"), headers={"X-Request-Timeout": "1"})
    assert r.status_code == 504
    assert r.json()["error"]["code"] == "deadline_exceeded"
    assert backends(router)["b0"]["healthy"]


def test_a_backend_listing_its_languages_wrongly_stops_no_health_check(
    logs: Path, stop_all: list[Launched], fake: Callable[[FastAPI], str]
) -> None:
    """The check loop died on a JSON list: the healthy backend was never admitted."""
    app = checked_backend([{"code": "en"}])  # a list: no `languages` or `pairs`

    good = launch_echo(logs, "en,it")
    stop_all.append(good)
    router = launch_router(logs, "--backend-urls", f"{fake(app)},{good.url}", *CHECKS)
    stop_all.append(router)
    wait_until(lambda: backends(router)["b1"]["healthy"])
    assert not backends(router)["b0"]["healthy"]
    r = httpx.post(f"{router.url}/v1/translate", json=body("ciao", "it"))
    assert r.status_code == 200 and r.headers["x-dragoman-backend"] == "b1"
    assert "cannot be read" in router.log.read_text()


async def test_detection_goes_to_the_backend_serving_the_most_languages(
    logs: Path, stop_all: list[Launched]
) -> None:
    """A German text sent for French to a backend without German came back 200, unchanged,
    labelled French."""
    narrow = launch_echo(logs, "en,fr")
    wide = launch_echo(logs, "en,fr,de")
    stop_all += [narrow, wide]
    router = start(logs, stop_all, narrow, wide)
    async with httpx.AsyncClient(base_url=router.url, timeout=30) as c:
        r = await c.post(
            "/v1/translate", json={"text": GERMAN, "source_lang": "auto", "target_lang": "fr"}
        )
        assert r.headers["x-dragoman-backend"] == "b1"
        assert r.json()["translations"][0]["detected_source_lang"] == "de"
        r = await c.post("/translate", data={"q": GERMAN, "source": "auto", "target": "fr"})
        assert r.json()["detectedLanguage"]["language"] == "de"
        r = await c.post("/detect", data={"q": GERMAN})
        assert r.headers["x-dragoman-backend"] == "b1" and r.json()[0]["language"] == "de"
        # a given source still goes to the least loaded backend serving it
        r = await c.post("/v1/translate", json=body("hello"))
        assert r.headers["x-dragoman-backend"] == "b0"


async def test_language_lists_are_the_whole_fleets(logs: Path, stop_all: list[Launched]) -> None:
    fr = launch_echo(logs, "en,fr")
    de = launch_echo(logs, "en,de")
    stop_all += [fr, de]
    router = start(logs, stop_all, fr, de)
    async with httpx.AsyncClient(base_url=router.url, timeout=30) as c:
        lt = {entry["code"]: entry for entry in (await c.get("/languages")).json()}
        assert set(lt) == {"en", "fr", "de"}
        assert set(lt["en"]["targets"]) == {"fr", "de"}
        r = await c.get("/v2/languages", params={"type": "target"})
        assert {"FR", "DE"} <= {entry["language"] for entry in r.json()}
        r = await c.get("/v2/languages", params={"type": "bogus"})
        assert r.status_code == 400 and "message" in r.json()  # the backends' own refusal


async def test_backends_not_reached_yet_are_a_503_not_an_unsupported_pair(
    logs: Path, stop_all: list[Launched]
) -> None:
    router = launch_unready_router(logs, f"http://127.0.0.1:{free_port()}")
    stop_all.append(router)
    async with httpx.AsyncClient(base_url=router.url, timeout=30) as c:
        for path, payload in (
            ("/v1/translate", body("hi")),
            ("/translate", {"q": "hi", "source": "en", "target": "fr"}),
        ):
            r = await c.post(path, json=payload)
            assert r.status_code == 503, r.text
            assert r.headers["retry-after"] == "1"  # 0.2 s checks x 2 to be admitted
        metrics = (await c.get("/metrics")).text
    assert 'dragoman_router_rejected_total{reason="no_healthy_backend"} 2.0' in metrics


def test_a_backend_restarted_with_other_languages_is_learned_again(
    logs: Path, stop_all: list[Launched]
) -> None:
    port = free_port()
    first = launch_echo(logs, "en,fr", port=port)
    router = start(logs, stop_all, first)
    assert httpx.post(f"{router.url}/v1/translate", json=body("hi")).status_code == 200
    first.stop()
    wait_until(lambda: not backends(router)["b0"]["healthy"])
    stop_all.append(launch_echo(logs, "en,ja", port=port))
    wait_until(lambda: backends(router)["b0"]["healthy"])
    r = httpx.post(f"{router.url}/v1/translate", json=body("hi", "ja"))
    assert r.status_code == 200, r.text
    pairs = httpx.get(f"{router.url}/v1/languages").json()["pairs"]
    assert {(p["source"], p["target"]) for p in pairs} == {("en", "ja"), ("ja", "en")}


async def test_a_keys_rate_limit_is_not_multiplied_by_the_backends(
    logs: Path, stop_all: list[Launched], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DRAGOMAN_API_KEYS", "the-key")
    a = launch_echo(logs, "en,fr", "--key-requests-per-minute", "2")
    b = launch_echo(logs, "en,fr", "--key-requests-per-minute", "2")
    stop_all += [a, b]
    router = start(logs, stop_all, a, b)
    key = {"Authorization": "Bearer the-key"}
    async with httpx.AsyncClient(base_url=router.url, timeout=30) as c:
        codes = [
            (await c.post("/v1/translate", json=body(f"t{i}"), headers=key)).status_code
            for i in range(5)
        ]
        lt = {"q": "x", "source": "en", "target": "fr", "api_key": "the-key"}
        r = await c.post("/translate", data=lt)
    assert codes == [200, 200, 429, 429, 429]
    assert r.status_code == 429 and r.headers["x-dragoman-error"] == "rate_limited"


async def test_a_stream_holds_its_backends_place_until_it_ends(
    logs: Path, stop_all: list[Launched], fake: Callable[[FastAPI], str]
) -> None:
    app = checked_backend()

    @app.post("/v1/chat/completions")
    async def chat() -> StreamingResponse:
        async def events() -> AsyncIterator[bytes]:
            for _ in range(600):  # an event every 0.1 s for at most a minute
                yield b'data: {"choices": []}\n\n'
                await asyncio.sleep(0.1)
            yield b"data: [DONE]\n\n"

        return StreamingResponse(events(), media_type="text/event-stream")

    url = fake(app)
    backend = Launched(url, None, Path("/dev/null"))  # type: ignore[arg-type]
    router = start(logs, stop_all, backend, extra=("--max-in-flight", "1"))
    async with httpx.AsyncClient(base_url=router.url, timeout=60) as c:
        chat_body = {"messages": [{"role": "user", "content": "hi"}], "stream": True}
        async with c.stream("POST", "/v1/chat/completions", json=chat_body) as r:
            assert r.status_code == 200
            await r.aiter_lines().__anext__()  # the first event: the stream is open
            assert backends(router)["b0"]["outstanding"] == 1
            busy = await c.post("/v1/translate", json=body("hi"))
            assert busy.status_code == 503 and busy.json()["error"]["code"] == "backends_busy"
        # closed by the client: the place comes back
        await asyncio.to_thread(wait_until, lambda: backends(router)["b0"]["outstanding"] == 0)


async def test_cors_and_the_passed_reads_through_the_proxy(
    logs: Path, stop_all: list[Launched]
) -> None:
    backend = launch_echo(logs, "en,fr")
    stop_all.append(backend)
    router = start(logs, stop_all, backend)
    origin = {"Origin": "http://127.0.0.1:9"}
    async with httpx.AsyncClient(base_url=router.url, timeout=30) as c:
        r = await c.options(
            "/translate", headers={**origin, "Access-Control-Request-Method": "POST"}
        )
        assert r.status_code == 200 and r.headers["access-control-allow-origin"] == "*"
        r = await c.post(
            "/translate", data={"q": "hi", "source": "en", "target": "fr"}, headers=origin
        )
        assert r.headers.get_list("access-control-allow-origin") == ["*"]
        assert len(r.headers.get_list("date")) == 1 and len(r.headers.get_list("server")) == 1
        model = (await c.get("/v1/models")).json()["data"][0]["id"]
        assert (await c.get(f"/v1/models/{model}")).json()["id"] == model
        pairs = await c.get(
            "/v2/glossary-language-pairs", headers={"Authorization": "DeepL-Auth-Key x"}
        )
        assert pairs.status_code == 200 and "supported_languages" in pairs.json()


async def test_a_stream_broken_off_by_its_backend_gives_its_place_back(
    logs: Path, stop_all: list[Launched], fake: Callable[[FastAPI], str]
) -> None:
    """Starlette runs a stream's background task only when it ends normally: a backend that
    broke off its stream kept its place, and --max-in-flight of them wedged it."""
    app = checked_backend()

    @app.post("/v1/chat/completions")
    async def chat() -> StreamingResponse:
        async def events() -> AsyncIterator[bytes]:
            yield b'data: {"choices": []}\n\n'
            raise RuntimeError("the backend breaks off its stream")

        return StreamingResponse(events(), media_type="text/event-stream")

    backend = Launched(fake(app), None, Path("/dev/null"))  # type: ignore[arg-type]
    router = start(logs, stop_all, backend, extra=("--max-in-flight", "2"))
    chat_body = {"messages": [{"role": "user", "content": "hi"}], "stream": True}
    async with httpx.AsyncClient(base_url=router.url, timeout=30) as c:
        for _ in range(3):
            with contextlib.suppress(httpx.HTTPError):  # the relay is cut short too
                async with c.stream("POST", "/v1/chat/completions", json=chat_body) as r:
                    async for _line in r.aiter_lines():
                        pass
    await asyncio.to_thread(wait_until, lambda: backends(router)["b0"]["outstanding"] == 0)


def test_the_metrics_key_guards_the_proxys_view_of_itself(
    logs: Path, stop_all: list[Launched]
) -> None:
    """The proxy's /metrics, /v1/stats and /v1/backends (its backends' addresses) were open
    to anyone who could reach it, with no way to close them as `serve --metrics-key` does."""
    backend = launch_echo(logs, "en,fr")
    stop_all.append(backend)
    router = start(logs, stop_all, backend, extra=("--metrics-key", "m-secret"))
    with httpx.Client(base_url=router.url, timeout=30) as c:
        for path in ("/metrics", "/v1/stats", "/v1/backends"):
            r = c.get(path)
            assert r.status_code == 401, path
            assert r.json()["error"]["code"] == "missing_api_key"
            r = c.get(path, headers={"Authorization": "Bearer wrong"})
            assert r.json()["error"]["code"] == "invalid_api_key", path
            r = c.get(path, headers={"Authorization": "Bearer m-secret"})
            assert r.status_code == 200, path
        # the key guards the view, not the service: translations and health stay open
        assert c.post("/v1/translate", json=body("hello")).status_code == 200
        assert c.get("/ready").status_code == 200
