"""CORS: a browser's preflight, allowed or refused, and the headers of a real request."""

from __future__ import annotations

import httpx
import pytest

# what the OpenAI SDK sends from a browser (dangerouslyAllowBrowser), besides its body's type
STAINLESS = (
    "authorization,content-type,openai-organization,x-stainless-arch,x-stainless-lang,"
    "x-stainless-os,x-stainless-package-version,x-stainless-retry-count,x-stainless-runtime,"
    "x-stainless-runtime-version,x-stainless-timeout"
)


def _preflight(origin: str, method: str, headers: str = "") -> dict[str, str]:
    out = {"origin": origin, "access-control-request-method": method}
    if headers:
        out["access-control-request-headers"] = headers
    return out


async def test_any_request_header_and_every_method_we_serve_pass_the_preflight(
    client: httpx.AsyncClient,
) -> None:
    """The OpenAI SDK's own headers were refused: no browser could call the chat surface."""
    r = await client.options(
        "/v1/chat/completions", headers=_preflight("http://app.test", "POST", STAINLESS)
    )
    assert r.status_code == 200, r.text
    assert r.headers["access-control-allow-origin"] == "*"
    assert r.headers["access-control-allow-headers"] == STAINLESS
    r = await client.options("/v2/glossaries/abc", headers=_preflight("http://app.test", "DELETE"))
    assert r.status_code == 200 and "DELETE" in r.headers["access-control-allow-methods"]


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("/translate", lambda body: body["error"]),
        ("/v2/translate", lambda body: body["message"]),
        ("/v1/chat/completions", lambda body: body["error"]["message"]),
        ("/v1/translate", lambda body: body["error"]["message"]),
    ],
)
async def test_a_refused_preflight_is_in_the_surfaces_error_shape(
    serve,  # type: ignore[no-untyped-def]
    path: str,
    message,  # type: ignore[no-untyped-def]
) -> None:
    async with serve(cors_origins="http://ok.test") as (_app, c):
        r = await c.options(path, headers=_preflight("http://other.test", "POST"))
        assert r.status_code == 400 and r.headers["content-type"] == "application/json"
        assert message(r.json()) == "Disallowed CORS origin"
        assert "access-control-allow-origin" not in r.headers
        r = await c.options(path, headers=_preflight("http://ok.test", "PUT"))
        assert r.status_code == 400 and message(r.json()) == "Disallowed CORS method"
        r = await c.options(path, headers=_preflight("http://ok.test", "POST", STAINLESS))
        assert r.status_code == 200
        assert r.headers["access-control-allow-origin"] == "http://ok.test"


async def test_a_request_from_an_origin_not_allowed_gets_no_cors_headers(
    serve,  # type: ignore[no-untyped-def]
) -> None:
    async with serve(cors_origins="http://ok.test") as (_app, c):
        r = await c.get("/v2/languages", headers={"origin": "http://other.test"})
        assert r.status_code == 200 and "access-control-allow-origin" not in r.headers
        r = await c.get("/v2/languages", headers={"origin": "http://ok.test"})
        assert r.headers["access-control-allow-origin"] == "http://ok.test"
        assert "X-Request-Id" in r.headers["access-control-expose-headers"]
