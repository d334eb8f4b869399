"""The pages, their static files and the stats endpoint. Pages are open (static files; what
they call enforces keys); `/v1/stats` needs a key as /metrics does (api/deps.py)."""

from __future__ import annotations

from pathlib import Path

from fastapi import APIRouter, Depends, FastAPI, Query, Request
from fastapi.responses import FileResponse, JSONResponse
from fastapi.staticfiles import StaticFiles

from dragoman.api.deps import require_metrics_key
from dragoman.api.system import KEYED
from dragoman.web.sampler import Sampler

STATIC = Path(__file__).parent / "static"

# Everything the pages load comes from this server: no inline script, no other origin.
_HEADERS = {
    "Content-Security-Policy": "default-src 'self'; img-src 'self' data:; "
    "frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-cache",
}

pages = APIRouter(include_in_schema=False)


@pages.get("/")
async def translate_page() -> FileResponse:
    return FileResponse(STATIC / "index.html", headers=_HEADERS)


@pages.get("/files")
async def files_page() -> FileResponse:
    return FileResponse(STATIC / "files.html", headers=_HEADERS)


@pages.get("/dashboard")
async def dashboard_page() -> FileResponse:
    return FileResponse(STATIC / "dashboard.html", headers=_HEADERS)


_SINCE = Query(default=None, description="Only points newer than this (a point's `t`).")


def _answer(request: Request, since: float | None) -> JSONResponse:
    sampler: Sampler = request.app.state.stats
    return JSONResponse(sampler.answer(since), headers={"Cache-Control": "no-store"})


server_stats = APIRouter(tags=["system"])


@server_stats.get("/v1/stats", dependencies=[Depends(require_metrics_key)], responses=KEYED)
async def stats(request: Request, since: float | None = _SINCE) -> JSONResponse:
    """What the dashboard draws: a point a second for the last five minutes (rates between
    consecutive samples, p50/p99 over the last 10 s, CPU), and running totals."""
    return _answer(request, since)


router_stats = APIRouter(tags=["system"])


@router_stats.get("/v1/stats", dependencies=[Depends(require_metrics_key)], responses=KEYED)
async def proxy_stats(request: Request, since: float | None = _SINCE) -> JSONResponse:
    """The proxy's traffic and every backend's health, load, rate and latency, a point a
    second for the last five minutes."""
    return _answer(request, since)


def add_web(app: FastAPI, stats: APIRouter) -> None:
    """The pages, `/static/...` and the app's `/v1/stats` (its sampler on app.state.stats)."""
    app.include_router(pages)
    app.include_router(stats)
    app.mount("/static", StaticFiles(directory=STATIC), name="static")
