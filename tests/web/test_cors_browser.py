"""A page of another origin calling the server from a real browser: chromium makes the CORS
preflight itself, with the headers the OpenAI SDK sends from a browser."""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from dragoman.bench.servers import Launched
from tests.web._browser import Page

pytestmark = pytest.mark.browser

CALL = """async ([url, headers, body]) => {
  try {
    const r = await fetch(url, {method: "POST", headers: headers, body: JSON.stringify(body)});
    return {status: r.status, body: await r.json(), id: r.headers.get("x-request-id")};
  } catch (e) {
    return {error: String(e)};
  }
}"""
# the OpenAI SDK's own headers (openai-node, dangerouslyAllowBrowser)
SDK_HEADERS = {
    "Authorization": "Bearer none",
    "Content-Type": "application/json",
    "X-Stainless-Lang": "js",
    "X-Stainless-Package-Version": "4.0.0",
    "X-Stainless-OS": "Unknown",
    "X-Stainless-Arch": "unknown",
    "X-Stainless-Runtime": "browser:chrome",
    "X-Stainless-Retry-Count": "0",
}


@pytest.fixture(scope="module")
def other_origin() -> Iterator[str]:
    """An empty page served from 127.0.0.1 on a port of its own: another origin."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = b"<!DOCTYPE html><title>app</title>"
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.mark.parametrize(
    ("path", "body"),
    [
        (
            "/v1/chat/completions",
            {"model": "", "messages": [{"role": "user", "content": "Hello there"}]},
        ),
        ("/v1/translate", {"text": "Hello there", "source_lang": "en", "target_lang": "fr"}),
    ],
)
def test_a_page_of_another_origin_calls_the_server_with_the_sdks_headers(
    page: Page, echo: Launched, other_origin: str, path: str, body: dict[str, Any]
) -> None:
    if "model" in body:  # the one the server serves
        body = {**body, "model": httpx.get(f"{echo.url}/v1/models").json()["data"][0]["id"]}
    page.page.goto(f"{other_origin}/")
    got = page.page.evaluate(CALL, [f"{echo.url}{path}", SDK_HEADERS, body])
    assert "error" not in got, got  # a refused preflight is a TypeError: Failed to fetch
    assert got["status"] == 200, got
    assert "Hello there" in str(got["body"])
    assert got["id"]  # an exposed header the page can read
