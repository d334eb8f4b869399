"""`--allowed-hosts`: a server bound to a loopback address answers only its local names, so a
page whose name was made to resolve to 127.0.0.1 (DNS rebinding) reaches nothing; bound
elsewhere it answers any host unless told; an explicit list replaces the default. Tried on a
real server (uvicorn on 127.0.0.1, as `dragoman serve` runs it) and on `dragoman route`'s app."""

from __future__ import annotations

import logging
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn
from pydantic import ValidationError

from dragoman.api.hosts import host_of, hosts_for
from dragoman.api.serve import run
from dragoman.bench.servers import free_port
from dragoman.errors import EngineDead
from dragoman.router.settings import RouteSettings
from dragoman.service.settings import ServeSettings
from tests.fakes import FakeTranslator, factory_for

BODY = {"text": "hello", "source_lang": "en", "target_lang": "fr"}


def test_the_default_follows_the_bound_address() -> None:
    local = ["localhost", "127.0.0.1", "::1"]
    assert hosts_for("127.0.0.1", []) == local
    assert hosts_for("localhost", []) == local
    assert hosts_for("::1", []) == local
    assert hosts_for("[::1]", []) == local
    assert hosts_for("127.0.1.1", []) == [*local, "127.0.1.1"]  # and the address itself
    for anywhere in ("0.0.0.0", "::", "10.0.0.5", "myhost"):
        assert hosts_for(anywhere, []) == ["*"], anywhere
    assert hosts_for("127.0.0.1", ["translate.example.com"]) == ["translate.example.com"]
    assert hosts_for("0.0.0.0", ["a.example"]) == ["a.example"]


def test_a_host_header_is_read_without_its_port() -> None:
    assert host_of("[::1]:8000") == "::1"
    assert host_of("[::1]") == "::1"
    assert host_of("LocalHost:80") == "localhost"
    assert host_of("127.0.0.1") == "127.0.0.1"
    for malformed in (None, "", "::1", "a/b", "a b", "evil.example@127.0.0.1", "[::1"):
        assert host_of(malformed) is None, malformed


def test_the_setting_takes_names_patterns_and_star_from_the_flag_and_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert ServeSettings().allowed_hosts == []
    given = ServeSettings(allowed_hosts="a.example, *.b.example,[::1],::1,10.0.0.5")
    assert given.allowed_hosts == ["a.example", "*.b.example", "[::1]", "::1", "10.0.0.5"]
    assert ServeSettings(allowed_hosts="*").allowed_hosts == ["*"]
    monkeypatch.setenv("DRAGOMAN_ALLOWED_HOSTS", "x.example,y.example")
    assert ServeSettings().allowed_hosts == ["x.example", "y.example"]
    assert RouteSettings(backend_urls=["http://127.0.0.1:1"]).allowed_hosts == [
        "x.example",
        "y.example",
    ]
    for bad in ("a.example:8000", "[::1]:80", "a*.example", "*example.com", "a b"):
        with pytest.raises(ValidationError, match="without a port"):
            ServeSettings(allowed_hosts=[bad])


async def test_an_explicit_list_replaces_the_default_and_refuses_in_the_surfaces_shape(
    serve: Any,
) -> None:
    async with serve(allowed_hosts=["translate.example", "*.corp.example"]) as (_app, c):
        for host in ("translate.example", "TRANSLATE.example:443", "a.corp.example:8000"):
            r = await c.post("/v1/translate", json=BODY, headers={"Host": host})
            assert r.status_code == 200, host
        for host in ("localhost:8000", "corp.example", "evil.example", "translate.example.evil"):
            r = await c.post("/v1/translate", json=BODY, headers={"Host": host})
            assert r.status_code == 400, host
            assert r.json()["error"]["code"] == "host_not_allowed"
        evil = {"Host": "evil.example"}
        r = await c.post(
            "/translate", json={"q": "hi", "source": "en", "target": "fr"}, headers=evil
        )
        assert r.status_code == 400 and "does not answer for host" in r.json()["error"]
        r = await c.post("/v2/translate", json={"text": ["hi"], "target_lang": "FR"}, headers=evil)
        assert r.status_code == 400 and "does not answer for host" in r.json()["message"]
        assert r.headers["x-dragoman-error"] == "host_not_allowed"
    async with serve(allowed_hosts=["*"]) as (_app, c):
        r = await c.post("/v1/translate", json=BODY, headers={"Host": "evil.example"})
        assert r.status_code == 200


def wait_until(check: Any, seconds: float = 30.0) -> None:
    end = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < end, "the condition did not come true in time"
        time.sleep(0.02)


@pytest.fixture
def local_server(tmp_path: Path) -> Iterator[str]:
    """`run` (what `dragoman serve` runs) on 127.0.0.1 with the default settings, in a thread;
    stopped by its engine dying (the server's own way out)."""
    fake = FakeTranslator()
    port = free_port()
    settings = ServeSettings(
        data_dir=tmp_path,
        port=port,
        engine_check_interval=0.05,
        log_level="warning",
        gc_freeze=False,
    )
    raised: list[BaseException] = []

    def serve() -> None:
        try:
            run(settings, factory_for(fake))
        except BaseException as exc:
            raised.append(exc)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{port}"

    def up() -> bool:
        try:
            return httpx.get(f"{url}/ready", timeout=5).status_code == 200
        except httpx.TransportError:
            return False

    wait_until(lambda: up() or not thread.is_alive())
    assert thread.is_alive(), raised
    yield url
    fake.dead = True
    thread.join(timeout=30)
    assert not thread.is_alive()
    assert len(raised) == 1 and isinstance(raised[0], EngineDead), raised


def test_a_server_on_loopback_answers_only_its_local_names(local_server: str) -> None:
    port = int(local_server.rsplit(":", 1)[1])
    with httpx.Client(base_url=local_server, timeout=10) as c:
        for host in (f"127.0.0.1:{port}", f"localhost:{port}", f"[::1]:{port}", "localhost"):
            r = c.post("/v1/translate", json=BODY, headers={"Host": host})
            assert r.status_code == 200, host
        r = c.post("/v1/translate", json=BODY, headers={"Host": "evil.example"})
        assert r.status_code == 400
        assert r.json()["error"] == {
            "code": "host_not_allowed",
            "message": "this server does not answer for host 'evil.example' (see --allowed-hosts)",
        }
        for host in (f"evil.example:{port}", "127.0.0.1.evil.example", "[::2]"):
            for path in ("/health", "/", "/metrics", "/v1/info"):
                assert c.get(path, headers={"Host": host}).status_code == 400, (host, path)
    # no Host at all (HTTP/1.0 may leave it out)
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(b"GET /health HTTP/1.0\r\n\r\n")
        assert s.recv(64).split(b" ")[1] == b"400"


@pytest.mark.parametrize(
    ("bind", "allowed", "evil"),
    [("127.0.0.1", [], 400), ("0.0.0.0", [], 200), ("0.0.0.0", ["translate.example"], 400)],
    ids=["loopback", "any-address", "any-address-told"],
)
async def test_route_checks_the_host_as_serve_does(
    bind: str, allowed: list[str], evil: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`dragoman route`'s app, as it would be served (uvicorn.run caught)."""
    from dragoman.router.app import route

    served: list[Any] = []
    monkeypatch.setattr(uvicorn, "run", lambda app, **kw: served.append(app))
    monkeypatch.setattr("dragoman.logs.setup", lambda log_format: None)
    level = logging.getLogger("dragoman").level
    settings = RouteSettings(
        backend_urls=["http://127.0.0.1:1"],
        host=bind,
        port=free_port(),
        allowed_hosts=allowed,
        gc_freeze=False,
        log_level="warning",
    )
    try:
        route(settings)
    finally:
        logging.getLogger("dragoman").setLevel(level)
    transport = httpx.ASGITransport(app=served[0])
    async with httpx.AsyncClient(transport=transport, base_url="http://x") as c:
        r = await c.get("/health", headers={"Host": "evil.example"})
        assert r.status_code == evil
        if evil == 400:
            assert r.json()["error"]["code"] == "host_not_allowed"
        told = "translate.example" if allowed else "127.0.0.1:8080"
        assert (await c.get("/health", headers={"Host": told})).status_code == 200
