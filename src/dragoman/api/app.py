"""The app factory: built from parsed settings and an engine factory; state lives on app.state."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

from fastapi import FastAPI

from dragoman import __version__
from dragoman.api import system
from dragoman.api.edge import EdgeMiddleware, Limits
from dragoman.api.errors import register_error_handlers, render
from dragoman.api.lifecycle import EngineHost, TranslatorFactory
from dragoman.api.translate import router as translate
from dragoman.metrics import Metrics, MetricsMiddleware
from dragoman.service.admission import Admission
from dragoman.service.keys import KeyStore
from dragoman.service.quota import KeyLimits
from dragoman.service.translation import TranslationService
from dragoman.settings import ServeSettings


def limits_of(settings: ServeSettings) -> Limits:
    return Limits(
        max_header_bytes=settings.max_header_bytes,
        max_body_bytes=settings.max_body_bytes,
        body_timeout=settings.body_timeout,
        max_json_depth=settings.max_json_depth,
    )


def build_app(
    settings: ServeSettings,
    factory: TranslatorFactory,
    on_fatal: Callable[[str], None] | None = None,
) -> FastAPI:
    metrics = Metrics()
    host = EngineHost(factory, on_fatal, settings.engine_check_interval)
    admission = Admission(settings.admission_limit(), settings.engine_capacity())
    raw_keys = settings.api_keys.get_secret_value() if settings.api_keys else None
    keys = KeyStore(settings.api_keys_file, raw_keys)
    limits = KeyLimits(
        settings.key_requests_per_minute, settings.key_chars_per_minute, settings.key_chars_per_day
    )
    metrics.watch_admission(admission)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        async with host:
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
    app.state.engine_host = host
    app.state.admission = admission
    app.state.keys = keys
    app.state.service = TranslationService(host.translator, settings, metrics, admission, limits)
    # The last added runs first: metrics see every answer, the edge's refusals included; the
    # edge's ids and input limits hold before routing and parsing.
    app.add_middleware(EdgeMiddleware, limits=limits_of(settings), render=render)
    app.add_middleware(MetricsMiddleware, metrics=metrics.http)
    register_error_handlers(app)
    app.include_router(translate.router)
    app.include_router(system.router)
    return app
