"""The proxy app: translations of every surface (native, LibreTranslate, DeepL) routed by pair,
their reads and OpenAI chat to any healthy backend, /v1/languages of its own, plus /health,
/ready and /metrics."""

from __future__ import annotations

import asyncio
import contextlib
import math
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Annotated, Any

import httpx
from fastapi import Depends, FastAPI, Request
from fastapi.responses import JSONResponse, Response
from prometheus_client import CONTENT_TYPE_LATEST

from dragoman import __version__
from dragoman.api._disconnect import cancel_on_disconnect
from dragoman.api.cors import Cors
from dragoman.api.deps import require_metrics_key
from dragoman.api.edge import EdgeMiddleware, Limits
from dragoman.api.errors import error_response, register_error_handlers, render
from dragoman.api.hosts import AllowedHosts, hosts_for
from dragoman.api.translate.protocol import TranslateRequest
from dragoman.api.uploads import FORM_BYTES, UPLOAD_PATHS
from dragoman.languages import parse_pair
from dragoman.metrics import MetricsMiddleware, RouterMetrics
from dragoman.router.backends import ANY, Backend, Pool, Want
from dragoman.router.compat import (
    DOCUMENTS,
    GLOSSARIES,
    PASSED,
    deepl_want,
    libretranslate_want,
    native_document_want,
)
from dragoman.router.gather import gather_lists, merged
from dragoman.router.health import run_checks
from dragoman.router.paths import RefuseDotSegments, forwarded_path
from dragoman.router.proxy import Outgoing, forward, outgoing
from dragoman.router.settings import RouteSettings
from dragoman.web.docs import add_docs
from dragoman.web.routes import add_web, router_stats
from dragoman.web.stats import RouterStats


def get_pool(request: Request) -> Pool:
    pool: Pool = request.app.state.pool
    return pool


PoolDep = Annotated[Pool, Depends(get_pool)]


def backends_from(settings: RouteSettings) -> list[Backend]:
    out = []
    for i, spec in enumerate(settings.backends):
        pairs = {parse_pair(p) for p in spec.pairs}
        out.append(
            Backend(
                name=spec.name or f"b{i}",
                url=spec.url.rstrip("/"),
                pairs=pairs,
                learn_pairs=not pairs,
                max_in_flight=settings.max_in_flight,
            )
        )
    return out


def build_router_app(
    settings: RouteSettings, after_start: Callable[[], None] | None = None
) -> FastAPI:
    """`after_start` runs as the lifespan starts, once the clients are built (the proxy
    process's own set-up: `route` below)."""
    metrics = RouterMetrics()
    pool = Pool(
        backends_from(settings),
        settings.fail_threshold,
        settings.recover_threshold,
        readmit_seconds=math.ceil(settings.check_interval * settings.recover_threshold),
    )
    stats = RouterStats(metrics, pool)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        limits = httpx.Limits(
            max_connections=settings.max_connections, max_keepalive_connections=None
        )
        # a wait for one of the proxy's own connections is short: 503 proxy_busy after it
        timeout = httpx.Timeout(
            settings.timeout, connect=settings.connect_timeout, pool=settings.connect_timeout
        )
        async with (
            httpx.AsyncClient(limits=limits, timeout=timeout) as client,
            httpx.AsyncClient(timeout=settings.check_timeout) as checker,
            stats,
        ):
            app.state.client = client
            if after_start is not None:
                after_start()
            task = asyncio.create_task(run_checks(checker, pool, metrics, settings.check_interval))
            try:
                yield
            finally:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task

    app = FastAPI(
        title="dragoman router",
        version=__version__,
        lifespan=lifespan,
        docs_url=None,  # web/docs.py: from this server's files
        redoc_url=None,
    )
    app.state.settings = settings
    app.state.pool = pool
    app.state.metrics = metrics
    app.state.stats = stats
    app.add_middleware(RefuseDotSegments, render=render)  # inside the edge: logged, with an id
    limits = Limits(
        max_body_bytes=settings.max_body_bytes,
        max_upload_bytes=settings.max_file_bytes + FORM_BYTES,
        upload_paths=UPLOAD_PATHS,
    )
    app.add_middleware(EdgeMiddleware, limits=limits, render=render)
    app.add_middleware(MetricsMiddleware, metrics=metrics.http)
    if settings.cors_origins:  # refusals carry the headers too
        app.add_middleware(Cors, origins=settings.cors_origins)
    if settings.allowed_hosts:  # outermost, as on a server (`route` sets the default)
        app.add_middleware(AllowedHosts, hosts=settings.allowed_hosts)
    register_error_handlers(app)

    def outgoing_of(request: Request, body: bytes) -> Outgoing:
        """Forwarded as sent, with the client's content type, key, request id (ours when it
        sent none) and deadline headers; the path as routed (router/paths.py)."""
        headers = dict(request.headers)
        headers["x-request-id"] = request.scope["state"]["request_id"]
        path = forwarded_path(request.scope["path"])
        return outgoing(request.method, path, request.url.query, body, headers)

    async def relay(request: Request, want: Want) -> Response:
        out = outgoing_of(request, await request.body())
        client = request.app.state.client
        # A detected source is detected among the languages of the backend the request
        # reaches: the one serving the most.
        widest = (want[0] is None and want != ANY) or request.url.path == "/detect"
        work = forward(client, pool, want, out, metrics, widest=widest)
        return await cancel_on_disconnect(request, work)

    async def gathered(
        request: Request, key: str, nested: str | None = None, inside: str | None = None
    ) -> Response:
        """A list as every healthy backend answers it, merged by `key` (the union of each
        entry's `nested` list too; the list is the `inside` field of an object where
        given): a client builds its menus from it."""
        out = outgoing_of(request, await request.body())
        answers = await gather_lists(request.app.state.client, pool, out, metrics)
        return merged(answers, key, nested, inside)

    @app.post("/v1/translate")
    async def translate(body: TranslateRequest, request: Request) -> Response:
        """Validated here (same errors as a server), routed by its pair."""
        source = None if body.source_lang == "auto" else body.source_lang
        return await relay(request, (source, body.target_lang))

    @app.post("/translate", tags=["libretranslate"])
    async def lt_translate(request: Request) -> Response:
        """LibreTranslate's translate, routed by its pair (source auto: by its target)."""
        return await relay(request, await libretranslate_want(request))

    @app.post("/v2/translate", tags=["deepl"])
    async def deepl_translate(request: Request) -> Response:
        """DeepL's translate, routed by its pair (no source_lang: by its target)."""
        return await relay(request, await deepl_want(request))

    @app.post("/v1/documents", tags=["documents"])
    async def documents(request: Request) -> Response:
        """A document upload, routed by its pair (source auto: by its target)."""
        return await relay(request, await native_document_want(request))

    @app.post("/v2/document", tags=["deepl"])
    async def deepl_document(request: Request) -> Response:
        """DeepL's document upload, routed by its pair."""
        return await relay(request, await deepl_want(request))

    @app.post("/translate_file", tags=["libretranslate"])
    async def lt_translate_file(request: Request) -> Response:
        """LibreTranslate's file translation, routed by its pair."""
        return await relay(request, await libretranslate_want(request))

    @app.get("/languages", tags=["libretranslate"])
    async def lt_languages(request: Request) -> Response:
        """LibreTranslate's languages, merged over the healthy backends."""
        return await gathered(request, "code", "targets")

    @app.api_route("/v2/languages", methods=["GET", "POST"], tags=["deepl"])
    async def deepl_languages(request: Request) -> Response:
        """DeepL's languages (`type` source or target), merged over the healthy backends."""
        return await gathered(request, "language")

    @app.get("/v1/models", tags=["openai"])
    async def openai_models(request: Request) -> Response:
        """OpenAI's model list: every healthy backend's models, each id once."""
        return await gathered(request, "id", inside="data")

    for methods, path in PASSED:

        async def passed(request: Request) -> Response:
            return await relay(request, ANY)

        app.add_api_route(path, passed, methods=list(methods), name=path, include_in_schema=False)

    for methods, path in DOCUMENTS:

        async def held(request: Request) -> Response:
            return await relay(request, ANY)  # each backend in turn until one holds the job

        app.add_api_route(path, held, methods=list(methods), name=path, include_in_schema=False)

    for methods, path in GLOSSARIES:

        async def stored(request: Request) -> Response:
            pool.glossary_store()  # refused unless every backend shares the glossaries
            return await relay(request, ANY)

        app.add_api_route(path, stored, methods=list(methods), name=path, include_in_schema=False)

    @app.get("/v1/languages")
    async def languages(pool: PoolDep) -> dict[str, Any]:
        """Language pairs served through this proxy, and by which backends."""
        return {
            "pairs": [
                {"source": s, "target": t, "backends": names}
                for (s, t), names in sorted(pool.served_pairs().items())
            ]
        }

    @app.get("/health")
    async def health() -> dict[str, str]:
        return {"status": "ok"}

    @app.get("/ready")
    async def ready(pool: PoolDep) -> JSONResponse:
        healthy = [b.name for b in pool.backends if b.healthy]
        if not healthy:
            return error_response(503, "no_healthy_backend", "no backend is healthy")
        return JSONResponse({"status": "ready", "healthy_backends": healthy})

    @app.get("/v1/backends", dependencies=[Depends(require_metrics_key)])
    async def backends(pool: PoolDep) -> list[dict[str, Any]]:
        return [
            {
                "name": b.name,
                "url": b.url,
                "healthy": b.healthy,
                "outstanding": b.outstanding,
                "pairs": len(b.pairs),
            }
            for b in pool.backends
        ]

    @app.get("/metrics", include_in_schema=False, dependencies=[Depends(require_metrics_key)])
    async def metrics_route() -> Response:
        return Response(metrics.exposition(), media_type=CONTENT_TYPE_LATEST)

    add_web(app, router_stats)  # the translate page, the dashboard and /v1/stats
    add_docs(app)
    return app


def route(settings: RouteSettings) -> None:
    import logging

    import uvicorn

    from dragoman.heap import settle
    from dragoman.listen import check_listen
    from dragoman.logs import setup, uvicorn_log_config

    # As on `dragoman serve`: the edge's access line (with the request's id) in place of
    # uvicorn's, every line naming its request.
    logging.getLogger("dragoman").setLevel(settings.log_level.upper())
    setup(settings.log_format)
    check_listen(settings.host, settings.port)
    # Known now, as it is bound: on a loopback address, only the local names (api/hosts.py).
    hosts = hosts_for(settings.host, settings.allowed_hosts)
    settings = settings.model_copy(update={"allowed_hosts": hosts})
    app = build_router_app(settings, after_start=settle if settings.gc_freeze else None)
    uvicorn.run(
        app,
        host=settings.host,
        port=settings.port,
        log_level=settings.log_level,
        log_config=uvicorn_log_config(settings.log_format),
        access_log=False,
        timeout_keep_alive=settings.keep_alive_seconds,
    )
