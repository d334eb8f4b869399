"""The app factory: built from parsed settings and an engine factory; state lives on app.state."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

from fastapi import FastAPI

from dragoman import __version__
from dragoman.api import system
from dragoman.api.errors import register_error_handlers
from dragoman.api.lifecycle import EngineHost, TranslatorFactory
from dragoman.api.translate import router as translate
from dragoman.metrics import Metrics, MetricsMiddleware
from dragoman.settings import ServeSettings


def build_app(
    settings: ServeSettings,
    factory: TranslatorFactory,
    on_fatal: Callable[[str], None] | None = None,
) -> FastAPI:
    metrics = Metrics()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        async with EngineHost(factory, on_fatal) as host:
            app.state.engine_host = host
            metrics.watch_engines(host.plans)
            yield

    app = FastAPI(
        title="dragoman",
        version=__version__,
        description="High-throughput machine translation on vLLM's async engine.",
        lifespan=lifespan,
    )
    app.state.settings = settings
    app.state.metrics = metrics
    app.add_middleware(MetricsMiddleware, metrics=metrics.http)
    register_error_handlers(app)
    app.include_router(translate.router)
    app.include_router(system.router)
    return app
