"""With API keys on, every route of the server needs a key except the probes, the pages (and
their files) and the language lists: each route of the app is tried without a key, so a door
added later cannot be left open by accident. The server's view of itself (/metrics, /v1/info,
/v1/stats) takes the metrics key when there is one, else any API key."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr
from starlette.routing import Mount, Route

from dragoman.api.app import build_app
from dragoman.service.settings import ServeSettings
from tests.fakes import FakeTranslator, factory_for

KEY = "the-key"
BEARER = {"Authorization": f"Bearer {KEY}"}

# What answers without a key when keys are on: probes, the pages and what they load before a
# key is asked for (LibreTranslate's frontend settings say whether one is needed), the API
# docs page with its OpenAPI document, and the language lists (the router learns pairs there).
OPEN = {
    "/health",
    "/ready",
    "/",
    "/dashboard",
    "/files",
    "/docs",
    "/openapi.json",
    "/v1/languages",
    "/languages",
    "/frontend/settings",
}
# Open by design: LibreTranslate's download URL is the key to its file (an unknown one is 404).
BY_NAME = {"/download_file/x"}
# Mounts of static files, with a file each serves.
FILES = {"/static": "/static/style.css", "/docs/static": "/docs/static/swagger-ui.css"}
# The server's view of itself: the metrics key, else any API key.
SELF = {"/metrics", "/v1/info", "/v1/stats"}
# LibreTranslate reads its parameters (api_key among them) before the key: a valid request.
BODIES: dict[str, object] = {
    "/translate": {"q": "hello", "source": "en", "target": "fr"},
    "/detect": {"q": "hello"},
    "/translate_file": {"target": "fr"},
}
KEY_ERRORS = ("missing_api_key", "invalid_api_key")
PATH_PARAMS = {
    "{model:path}": "fake",
    "{glossary_id}": "0" * 8,
    "{document_id}": "0" * 22,
    "{name}": "x",
}


def with_key(path: str, body: object, key: str) -> dict[str, object]:
    """A request's arguments with `key` as the path's surface takes it."""
    if path in BODIES:  # LibreTranslate: a parameter
        return {"json": {**BODIES[path], "api_key": key}}  # type: ignore[dict-item]
    return {"json": body, "headers": {"Authorization": f"Bearer {key}"}}


def doors(app) -> list[tuple[str, str]]:  # type: ignore[no-untyped-def]
    """(method, path) of every route of `app`, path parameters filled in."""
    found = []
    for route in app.routes:
        if isinstance(route, Mount):
            continue
        assert isinstance(route, Route), f"a route of a kind this test does not know: {route}"
        path = route.path
        for param, value in PATH_PARAMS.items():
            path = path.replace(param, value)
        assert "{" not in path, f"{route.path}: give its parameter a value in PATH_PARAMS"
        found += [(m, path) for m in sorted((route.methods or set()) - {"HEAD"})]
    return found


async def test_with_keys_on_every_route_but_the_open_ones_needs_a_key(serve) -> None:  # type: ignore[no-untyped-def]
    async with serve(api_keys=SecretStr(KEY)) as (app, c):
        routes = doors(app)
        assert len(routes) > 25  # every surface's
        for method, path in routes:
            body = BODIES.get(path, {})
            r = await c.request(method, path, json=body)
            refused = r.headers.get("x-dragoman-error")
            if path in OPEN:
                assert r.status_code == 200, (method, path, r.status_code, r.text)
                continue
            if path in BY_NAME:
                assert r.status_code == 404 and refused == "document_not_found", (method, path)
                continue
            # Refused for its key in its surface's shape: 401 native and OpenAI, 400
            # LibreTranslate (its own status for a missing key), 403 DeepL.
            assert refused == "missing_api_key", (method, path, r.status_code, r.text)
            assert r.status_code in (400, 401, 403), (method, path, r.status_code)
            r = await c.request(method, path, **with_key(path, body, "not-a-key"))
            assert r.headers.get("x-dragoman-error") == "invalid_api_key", (method, path)
            r = await c.request(method, path, **with_key(path, body, KEY))
            assert r.headers.get("x-dragoman-error") not in KEY_ERRORS, (method, path, r.text)
        mounts = {r.path for r in app.routes if isinstance(r, Mount)}
        assert mounts == set(FILES), "a new mount: is it a page's files? add it to FILES"
        for file in FILES.values():
            assert (await c.get(file)).status_code == 200, file


async def test_the_servers_view_of_itself_is_open_only_without_keys(serve) -> None:  # type: ignore[no-untyped-def]
    async with serve() as (_app, c):
        for path in sorted(SELF):
            assert (await c.get(path)).status_code == 200, path


async def test_with_keys_on_the_servers_view_of_itself_takes_a_key_as_any_surface_sends_it(
    serve: Any,
) -> None:
    async with serve(api_keys=SecretStr(KEY)) as (_app, c):
        for path in sorted(SELF):
            r = await c.get(path)
            assert r.status_code == 401, path
            assert r.json()["error"] == {
                "code": "missing_api_key",
                "message": "an API key is required: send Authorization: Bearer <API key>",
            }
            assert (await c.get(path, headers=BEARER)).status_code == 200, path
            deepl = {"Authorization": f"DeepL-Auth-Key {KEY}"}
            assert (await c.get(path, headers=deepl)).status_code == 200, path
            assert (await c.get(path, params={"api_key": KEY})).status_code == 200, path
            r = await c.get(path, params={"api_key": "wrong"})
            assert r.status_code == 401 and r.json()["error"]["code"] == "invalid_api_key"
        metrics = (await c.get("/metrics", headers=BEARER)).text
        assert KEY not in metrics


async def test_a_metrics_key_keeps_the_servers_view_of_itself_from_api_keys(serve) -> None:  # type: ignore[no-untyped-def]
    """The operator's choice of a key of its own: an API key does not open it."""
    async with serve(api_keys=SecretStr(KEY), metrics_key=SecretStr("m-secret")) as (_app, c):
        for path in sorted(SELF):
            r = await c.get(path, headers=BEARER)
            assert r.status_code == 401 and r.json()["error"]["code"] == "invalid_api_key", path
            r = await c.get(path, headers={"Authorization": "Bearer m-secret"})
            assert r.status_code == 200, path


@pytest.mark.parametrize(
    ("settings", "warned"),
    [
        ({"api_keys": SecretStr(KEY)}, True),
        ({"api_keys": SecretStr(KEY), "metrics_key": SecretStr("m")}, False),
        ({}, False),
        ({"metrics_key": SecretStr("m")}, False),
    ],
    ids=["keys", "keys-and-metrics-key", "none", "metrics-key"],
)
def test_keys_without_a_metrics_key_are_warned_of_at_start(
    settings: dict[str, object], warned: bool, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="dragoman.api.app"):
        build_app(ServeSettings(data_dir=tmp_path, **settings), factory_for(FakeTranslator()))
    said = [r.getMessage() for r in caplog.records if "--metrics-key" in r.getMessage()]
    assert bool(said) == warned, said
    if warned:
        assert "/metrics, /v1/info and /v1/stats answer any valid API key" in said[0]
