"""The real `dragoman route` process forwards only what it routes: a path with a dot segment (as
sent, percent-encoded, or made by an encoded slash) is refused, never collapsed on its way to a
backend's /v1/info, /metrics, /v1/stats or /v2/glossaries; and no log line carries a query
string (a LibreTranslate client's `api_key=`). The backend is a small HTTP app in a thread that
records every path it is sent (an HTTP-layer double: what is under test is the proxy); requests
go as raw bytes over a socket, since an HTTP client would resolve the dot segments itself."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest
import uvicorn
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response
from starlette.types import ASGIApp, Receive, Scope, Send

from dragoman.bench.servers import Launched, free_port, launch_router
from tests.router._apps import checked_backend
from tests.router.test_routing import CHECKS

# What only a request that escaped the proxy's routes reaches.
GUARDED = ("/v1/info", "/metrics", "/v1/stats", "/v2/glossaries")
# The backend's own checks and what the proxy forwards of a model read.
CHECKED = ("/ready", "/v1/languages")


def wait_until(check: Callable[[], bool], seconds: float = 30) -> None:
    end = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < end, "the condition did not come true in time"
        time.sleep(0.05)


class Recording:
    """Records each request's decoded path, then serves it."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.paths: list[str] = []

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            self.paths.append(scope["path"])
        await self.app(scope, receive, send)

    def reached(self) -> list[str]:
        """The paths sent other than the proxy's checks."""
        return [p for p in self.paths if p not in CHECKED]


def guarded_backend() -> FastAPI:
    """A backend whose guarded paths answer 200 `reached` (where a leak would land) and whose
    model reads name the id they got; LibreTranslate's /languages hangs until its client leaves."""
    app = checked_backend()

    for path in GUARDED:

        async def reached(request: Request) -> JSONResponse:
            return JSONResponse({"reached": request.url.path})

        app.add_api_route(path, reached, methods=["GET", "POST"])

    @app.get("/v1/models/{model_id:path}")
    async def model(model_id: str) -> JSONResponse:
        return JSONResponse({"id": model_id, "object": "model"})

    @app.get("/languages")
    async def hang(request: Request) -> Response:
        while (await request.receive())["type"] != "http.disconnect":
            pass
        return Response(status_code=499)

    return app


@pytest.fixture
def backend() -> Iterator[tuple[Recording, str]]:
    recording = Recording(guarded_backend())
    port = free_port()
    config = uvicorn.Config(recording, host="127.0.0.1", port=port, log_level="warning")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    wait_until(lambda: server.started, 20)
    yield recording, f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(timeout=10)


def route(logs: Path, stop_all: list[Launched], url: str) -> Launched:
    """`dragoman route` over the backend at `url`, waited until it is admitted."""
    router = launch_router(logs, "--backend-urls", url, *CHECKS)
    stop_all.append(router)
    wait_until(lambda: all(b["healthy"] for b in httpx.get(f"{router.url}/v1/backends").json()))
    return router


def raw_get(url: str, target: bytes) -> tuple[int, bytes]:
    """GET `target` sent byte for byte as given (curl --path-as-is): (status, body)."""
    host, port = url.removeprefix("http://").split(":")
    rest = f" HTTP/1.1\r\nHost: {host}:{port}\r\nConnection: close\r\n\r\n".encode()
    request = b"GET " + target + rest
    with socket.create_connection((host, int(port)), timeout=30) as s:
        s.sendall(request)
        chunks = []
        while chunk := s.recv(65536):
            chunks.append(chunk)
    head, _, body = b"".join(chunks).partition(b"\r\n\r\n")
    return int(head.split(b" ")[1]), body


ESCAPES = [
    b"/v1/models/../../v1/info",
    b"/v1/models/%2e%2e/%2e%2e/v1/info",
    b"/v1/models/%2E%2e/%2e%2E/metrics",
    b"/v1/models/..%2f..%2fv1/stats",
    b"/v1/models/%2e%2e%2F%2e%2e%2Fv2/glossaries",
    b"/v1/models/a/./../../../metrics",
    b"/v1/models/%2e/%2e%2e/../v1/info",
    b"/v1/models/x/../../../v2/glossaries?auth_key=k",
]


@pytest.mark.parametrize("target", ESCAPES, ids=[t.decode() for t in ESCAPES])
def test_a_dot_segment_is_refused_never_forwarded(
    target: bytes,
    logs: Path,
    stop_all: list[Launched],
    backend: tuple[Recording, str],
) -> None:
    recording, url = backend
    # The bytes go as given: the backend itself, asked directly, gets the dot segments.
    assert raw_get(url, target)[0] in (200, 404)
    assert ".." in recording.paths[-1]
    recording.paths.clear()

    router = route(logs, stop_all, url)
    status, body = raw_get(router.url, target)
    assert recording.reached() == []  # nothing forwarded
    assert status == 400, body
    assert json.loads(body)["error"]["code"] == "invalid_path"  # OpenAI's shape, /v1/models


def test_the_path_as_routed_is_forwarded_encoded_again(
    logs: Path, stop_all: list[Launched], backend: tuple[Recording, str]
) -> None:
    """A model id with a slash reaches the backend as the proxy routed it; a `%` the client
    encoded stays one (it was decoded twice: `%252e%252e` became a `..` at the backend)."""
    recording, url = backend
    router = route(logs, stop_all, url)
    for target, model_id in (
        (b"/v1/models/org/model-1", "org/model-1"),
        (b"/v1/models/org%2Fmodel-1", "org/model-1"),
        (b"/v1/models/a%20b", "a b"),
        (b"/v1/models/%252e%252e/%252e%252e/v1/info", "%2e%2e/%2e%2e/v1/info"),
    ):
        status, body = raw_get(router.url, target)
        assert status == 200, body
        assert json.loads(body)["id"] == model_id
    assert not set(recording.reached()) & set(GUARDED)


def test_no_log_line_carries_a_query_string(
    logs: Path, stop_all: list[Launched], backend: tuple[Recording, str]
) -> None:
    """A merged list a backend did not answer is logged by its path, and every access line
    names the path alone: a LibreTranslate key in the query string stays out of the log."""
    _, url = backend
    router = route(logs, stop_all, url)
    r = httpx.get(
        f"{router.url}/languages",
        params={"api_key": "sekrit-lt-key"},
        headers={"X-Request-Timeout": "0.5"},  # the backend hangs: past its deadline
        timeout=30,
    )
    assert r.status_code == 502, r.text
    r = httpx.get(f"{router.url}/v1/models/m", params={"api_key": "sekrit-model-key"})
    assert r.status_code == 200, r.text
    router.stop()
    text = router.log.read_text(encoding="utf-8")
    assert "sekrit" not in text and "api_key" not in text
    assert "did not answer /languages " in text  # the line that named the query string
    assert "GET /v1/models/m 200 " in text
