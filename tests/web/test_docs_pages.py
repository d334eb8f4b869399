"""The API documentation pages in a real chromium: rendered from this server's own files,
with no request to any other origin (FastAPI's defaults loaded a CDN: blank offline, and a
foreign script ran beside the translate page's stored key)."""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest

from dragoman.bench.servers import Launched
from tests.web._browser import Page

pytestmark = pytest.mark.browser


def test_the_api_docs_render_from_this_server_alone(page: Page, echo: Launched) -> None:
    own = urlsplit(echo.url).netloc
    elsewhere: list[str] = []
    page.page.on(
        "request",
        lambda r: (
            None
            if urlsplit(r.url).netloc in (own, "") or r.url.startswith(("data:", "blob:"))
            else elsewhere.append(r.url)
        ),
    )
    response = page.page.goto(echo.url + "/docs")
    assert response is not None and response.ok
    assert "default-src 'self'" in response.headers["content-security-policy"]
    # the operations of the API are listed: the page's script ran and read /openapi.json
    page.page.locator(".opblock-summary-path").first.wait_for()
    assert page.page.get_by_text("/v1/translate").count() > 0
    assert elsewhere == []
    assert page.errors == []


def test_no_redoc_page(page: Page, echo: Launched) -> None:
    response = page.page.goto(echo.url + "/redoc")
    assert response is not None and response.status == 404
