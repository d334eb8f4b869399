"""Liveness, readiness, info and metrics. /health and /ready stay open (probes); /metrics and
/v1/info need the metrics key when one is set, else, with API keys on, an API key."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Request
from fastapi.responses import JSONResponse, Response
from prometheus_client import CONTENT_TYPE_LATEST

from dragoman.api.deps import (
    AdmissionDep,
    HostDep,
    MetricsDep,
    ServiceDep,
    SettingsDep,
    require_metrics_key,
)
from dragoman.api.errors import error_response
from dragoman.api.openapi import NATIVE_BODY, errors
from dragoman.api.translate.protocol import NativeError
from dragoman.errors import DragomanError
from dragoman.service.admission import DRAIN_RETRY

router = APIRouter(tags=["system"])

KEYED = errors(
    NativeError,
    {**NATIVE_BODY, 401: "Missing or invalid metrics key (or, with none set, API key)"},
)


@router.get("/health", responses=errors(NativeError, {**NATIVE_BODY, 503: "The engine died"}))
async def health(host: HostDep) -> JSONResponse:
    """200 while the process is alive and its engine has not died (loading counts as alive)."""
    if host.state == "failed":
        return error_response(503, "engine_dead", host.error or "the engine has stopped")
    return JSONResponse({"status": "ok", "engine": host.state})


@router.get(
    "/ready",
    responses=errors(
        NativeError, {**NATIVE_BODY, 503: "Engine loading or stopped, or the server draining"}
    ),
)
async def ready(
    request: Request, host: HostDep, metrics: MetricsDep, admission: AdmissionDep
) -> JSONResponse:
    """200 when the engine is loaded and answering and the server is not shutting down; 503
    otherwise (a balancer sends no new work here)."""
    if admission.draining:
        metrics.ready.set(0)
        return error_response(
            503, "draining", "the server is shutting down", {"Retry-After": str(DRAIN_RETRY)}
        )
    try:
        translator = host.translator()
        await translator.check_health()
    except DragomanError as exc:
        metrics.ready.set(0)
        if exc.code == "engine_dead":
            host.fail(exc.message)
        return error_response(exc.status_code, exc.code, exc.message)
    metrics.ready.set(1)
    return JSONResponse(
        {
            "status": "ready",
            "model": translator.model_name,
            "requests_unfinished": translator.num_unfinished_requests(),
            "admitted_in_flight": admission.in_flight,
            "admission_limit": admission.limit,
            # which glossary store it uses: `dragoman route` passes glossary requests only
            # to backends that share one
            "glossary_store": await request.app.state.glossaries.identity(),
        }
    )


@router.get("/v1/info", dependencies=[Depends(require_metrics_key)], responses=KEYED)
async def info(host: HostDep, settings: SettingsDep, service: ServiceDep) -> JSONResponse:
    """This host, each engine's settings with the reason for each choice, package versions
    (the same report as `dragoman info --json`), and the candidates policy: its setting, what
    the start-up probe measured, and how often each k was used. Engines appear once loaded."""
    from dragoman.engine.llamacpp import gguf_file
    from dragoman.host import detect
    from dragoman.info import report
    from dragoman.models.prepare import model_path

    plans = host.plans()
    served = {s.name: s.model for s in settings.models} or {settings.model: settings.model}
    # Loaded engines' models were resolved and checked when they started: named here, not
    # checked again (a `model prepare --force` since made that a 500; a GGUF was hashed or
    # re-encoded on the event loop).
    models = {
        name: str(gguf_file(settings, served.get(name, name)))
        if plan.engine.value == "llama.cpp"  # llama.cpp runs a GGUF itself
        else model_path(served.get(name, name), settings.data_dir, plan.weights.value)
        for name, plan in plans.items()
    }
    body = report(detect(), plans, models)
    used = {
        f"{sample.labels['k']}/{sample.labels['why']}": int(sample.value)
        for metric in service.metrics.candidates.collect()
        for sample in metric.samples
        if sample.name.endswith("_total")
    }
    body["candidates"] = {**service.candidates.report(), "used": used}
    return JSONResponse(body)


@router.get("/metrics", include_in_schema=False, dependencies=[Depends(require_metrics_key)])
async def metrics(metrics: MetricsDep) -> Response:
    return Response(metrics.exposition(), media_type=CONTENT_TYPE_LATEST)
