"""Backends that must misbehave, as small FastAPI apps (HTTP-layer doubles: what is under test
is the proxy): each starts as one that passes the proxy's checks."""

from __future__ import annotations

from fastapi import FastAPI
from fastapi.responses import JSONResponse

EN_FR: object = {"languages": [{"code": "en"}, {"code": "fr"}]}


def checked_backend(languages: object = EN_FR) -> FastAPI:
    """An app ready to the proxy's checks, listing `languages` as its /v1/languages."""
    app = FastAPI()

    @app.get("/ready")
    async def ready() -> JSONResponse:
        return JSONResponse({"ready": True})

    @app.get("/v1/languages")
    async def listed() -> JSONResponse:
        return JSONResponse(languages)

    return app
