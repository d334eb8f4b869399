"""The app factory: built from parsed settings and an engine factory; state lives on app.state."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

from fastapi import FastAPI

from dragoman import __version__
from dragoman.api import system
from dragoman.api.cors import Cors
from dragoman.api.deepl import documents as deepl_documents
from dragoman.api.deepl import glossaries as deepl_glossaries
from dragoman.api.deepl import router as deepl
from dragoman.api.edge import EdgeMiddleware, Limits
from dragoman.api.errors import register_error_handlers, render
from dragoman.api.hosts import AllowedHosts
from dragoman.api.libretranslate import files as libretranslate_files
from dragoman.api.libretranslate import router as libretranslate
from dragoman.api.lifecycle import EngineHost, TranslatorFactory
from dragoman.api.openai import router as openai
from dragoman.api.translate import documents
from dragoman.api.translate import router as translate
from dragoman.api.uploads import FORM_BYTES, UPLOAD_PATHS
from dragoman.engine.protocol import Translator
from dragoman.jobs.service import Jobs
from dragoman.jobs.store import JobStore
from dragoman.metrics import Metrics, MetricsMiddleware
from dragoman.service.admission import Admission
from dragoman.service.generation import GenerationService
from dragoman.service.glossary import Glossaries
from dragoman.service.keys import KeyStore
from dragoman.service.quota import KeyLimits
from dragoman.service.settings import ServeSettings
from dragoman.service.translation import TranslationService, shared_detector
from dragoman.web.docs import add_docs
from dragoman.web.routes import add_web, server_stats
from dragoman.web.stats import ServerStats

log = logging.getLogger(__name__)


def limits_of(settings: ServeSettings) -> Limits:
    return Limits(
        max_header_bytes=settings.max_header_bytes,
        max_body_bytes=settings.max_body_bytes,
        body_timeout=settings.body_timeout,
        max_json_depth=settings.max_json_depth,
        max_upload_bytes=settings.max_file_bytes + FORM_BYTES,
        upload_paths=UPLOAD_PATHS,
    )


def _preload_detector(translator: Translator) -> None:
    """Load the language detector for the served languages once the engine is up, before the
    server says it is ready: the first `source=auto` request does not pay for it, and lingua's
    build (1-3 s holding the GIL on 2 cores) stalls no request."""
    shared_detector(tuple(sorted(translator.languages))).load()


def glossaries_of(settings: ServeSettings, metrics: Metrics) -> Glossaries:
    """Where stored glossaries are kept: the --glossary-url store, else files."""
    if settings.glossary_url:
        from dragoman.service.glossary_shared import SharedGlossaries

        return SharedGlossaries(settings.glossary_url, metrics)
    from dragoman.service.glossary_files import FileGlossaries

    return FileGlossaries(settings.glossary_dir or settings.data_dir / "glossaries")


def job_store_of(settings: ServeSettings) -> JobStore:
    """Where document jobs are kept: the --documents-url store, else a folder."""
    if settings.documents_url:
        from dragoman.jobs.store_redis import RedisStore

        return RedisStore(
            settings.documents_url,
            settings.documents_max_jobs,
            settings.documents_max_bytes,
            settings.documents_ttl,
        )
    from dragoman.jobs.store import DirStore, default_dir

    return DirStore(
        settings.documents_dir or default_dir(settings.data_dir),
        settings.documents_max_jobs,
        settings.documents_max_bytes,
        settings.documents_ttl,
    )


def build_app(
    settings: ServeSettings,
    factory: TranslatorFactory,
    on_fatal: Callable[[str], None] | None = None,
    echo_request_id: bool = True,
    after_ready: Callable[[], None] | None = None,
) -> FastAPI:
    """`after_ready` runs in a thread once the engine is up and the detector loaded, before
    the server says it is ready (the server process's own set-up: api/serve.py)."""
    metrics = Metrics()

    def on_ready(translator: Translator) -> None:
        _preload_detector(translator)
        if after_ready is not None:
            after_ready()

    host = EngineHost(factory, on_fatal, settings.engine_check_interval, on_ready)
    admission = Admission(settings.admission_limit(), settings.engine_capacity())
    raw_keys = settings.api_keys.get_secret_value() if settings.api_keys else None
    keys = KeyStore(settings.api_keys_file, raw_keys)
    if keys.enabled and settings.metrics_key is None:
        log.warning(
            "API keys are on and no --metrics-key is set: /metrics, /v1/info and /v1/stats "
            "answer any valid API key (they show key names, the host and model paths); set "
            "--metrics-key (DRAGOMAN_METRICS_KEY) to keep them to the operator"
        )
    limits = KeyLimits(
        settings.key_requests_per_minute, settings.key_chars_per_minute, settings.key_chars_per_day
    )
    metrics.watch_admission(admission)
    stats = ServerStats(metrics, host, settings.architecture)

    service = TranslationService(host.translator, settings, metrics, admission, limits, host.ready)
    glossaries = glossaries_of(settings, metrics)
    jobs = Jobs(service, host.translator, job_store_of(settings))

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        async with host, stats, service, glossaries, jobs:
            metrics.watch_engines(host.plans)
            yield

    app = FastAPI(
        title="dragoman",
        version=__version__,
        description="High-throughput machine translation on vLLM's async engine.",
        lifespan=lifespan,
        docs_url=None,  # web/docs.py: from this server's files
        redoc_url=None,
    )
    app.state.settings = settings
    app.state.metrics = metrics
    app.state.engine_host = host
    app.state.admission = admission
    app.state.keys = keys
    app.state.glossaries = glossaries
    app.state.stats = stats
    app.state.generation = GenerationService(
        host.translator, metrics, admission, limits, settings.max_output_tokens
    )
    app.state.service = service
    app.state.jobs = jobs
    # The last added runs first: metrics see every answer, the edge's refusals included; the
    # edge's ids and input limits hold before routing and parsing.
    app.add_middleware(
        EdgeMiddleware, limits=limits_of(settings), render=render, echo_id=echo_request_id
    )
    app.add_middleware(MetricsMiddleware, metrics=metrics.http)
    if settings.cors_origins:  # refusals carry the headers too
        app.add_middleware(Cors, origins=settings.cors_origins)
    if settings.allowed_hosts:  # outermost: nothing answers another Host (`run` sets the default)
        app.add_middleware(AllowedHosts, hosts=settings.allowed_hosts)
    register_error_handlers(app)
    app.include_router(translate.router)
    app.include_router(documents.router)
    app.include_router(openai.router)
    app.include_router(libretranslate.router)
    app.include_router(libretranslate_files.router)
    app.include_router(deepl.router)
    app.include_router(deepl_glossaries.router)
    app.include_router(deepl_documents.router)
    app.include_router(system.router)
    add_web(app, server_stats)  # the translate page, the dashboard and /v1/stats
    add_docs(app)
    return app
