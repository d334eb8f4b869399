"""The API's interactive documentation (`/docs`, Swagger UI) from files this server holds:
FastAPI's own pages load their scripts from a public CDN, so offline they were blank, and a
script from another origin ran on the origin whose session storage holds the translate page's
API key. No `/redoc`: ReDoc's page loads its logo from its maker's site whatever it is told."""

from __future__ import annotations

from pathlib import Path

import fastapi_offline
from fastapi import FastAPI, Request
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles

from dragoman.api.openapi import serve_document

ASSETS = Path(fastapi_offline.__file__).parent / "static"
PREFIX = "/docs/static"  # not under /static: the pages' own mount would take it

# The page starts its script inline; nothing is loaded from another origin.
_HEADERS = {
    "Content-Security-Policy": "default-src 'self'; script-src 'self' 'unsafe-inline'; "
    "style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
    "frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}


def add_docs(app: FastAPI) -> None:
    """`/docs` for `app`, made with `docs_url=None, redoc_url=None`, and the document it shows."""
    serve_document(app)
    title = app.title
    openapi = app.openapi_url or "/openapi.json"
    app.mount(PREFIX, StaticFiles(directory=ASSETS), name="docs-assets")

    @app.get("/docs", include_in_schema=False)
    async def swagger(request: Request) -> HTMLResponse:
        root = request.scope.get("root_path", "")  # served under a path prefix (--root-path)
        page = get_swagger_ui_html(
            openapi_url=f"{root}{openapi}",
            title=f"{title}: API",
            swagger_js_url=f"{root}{PREFIX}/swagger-ui-bundle.js",
            swagger_css_url=f"{root}{PREFIX}/swagger-ui.css",
            swagger_favicon_url=f"{root}/static/icon.svg",
            swagger_ui_parameters=app.swagger_ui_parameters,
        )
        page.headers.update(_HEADERS)
        return page
