"""Typed dependencies: handlers reach settings, metrics, the engine and the translation service
only through these. The native surface's key convention (Bearer) and deadline header are read
here; what a key may do and what a deadline means live in the service.

All are `async def`: FastAPI runs a plain `def` dependency in its thread pool, a thread hop
per dependency per request (about a third of a cached answer's time, measured)."""

from __future__ import annotations

import hmac
from typing import Annotated

from fastapi import Depends, Request

from dragoman.api.lifecycle import EngineHost
from dragoman.engine.protocol import Translator
from dragoman.errors import InvalidApiKey, MissingApiKey
from dragoman.metrics import Metrics
from dragoman.service.admission import Admission
from dragoman.service.deadline import Deadline, parse_timeout
from dragoman.service.generation import GenerationService
from dragoman.service.keys import Caller, KeyStore
from dragoman.service.settings import ServeSettings
from dragoman.service.translation import TranslationService
from dragoman.settings import MetricsKeyed


async def get_settings(request: Request) -> ServeSettings:
    settings: ServeSettings = request.app.state.settings
    return settings


async def get_metrics(request: Request) -> Metrics:
    metrics: Metrics = request.app.state.metrics
    return metrics


async def get_host(request: Request) -> EngineHost:
    host: EngineHost = request.app.state.engine_host
    return host


async def get_admission(request: Request) -> Admission:
    admission: Admission = request.app.state.admission
    return admission


async def get_service(request: Request) -> TranslationService:
    service: TranslationService = request.app.state.service
    return service


async def get_generation(request: Request) -> GenerationService:
    service: GenerationService = request.app.state.generation
    return service


async def get_translator(host: Annotated[EngineHost, Depends(get_host)]) -> Translator:
    return host.translator()  # raises EngineNotReady / EngineDead -> 503


def bearer(request: Request) -> str | None:
    """The token of `Authorization: Bearer <token>`, else None."""
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    return (token.strip() or None) if scheme.lower() == "bearer" else None


async def get_keys(request: Request) -> KeyStore:
    keys: KeyStore = request.app.state.keys
    return keys


async def get_caller(request: Request) -> Caller:
    """The native surface's caller: its `Authorization: Bearer` key (401 without a valid one
    when keys are on)."""
    keys: KeyStore = request.app.state.keys
    return keys.authenticate(bearer(request))


def presented_key(request: Request) -> str | None:
    """An API key presented in any surface's convention a read can carry: `Authorization:
    Bearer` (native, OpenAI), `Authorization: DeepL-Auth-Key` (DeepL), or LibreTranslate's
    `api_key` in the query."""
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() in ("bearer", "deepl-auth-key") and token.strip():
        return token.strip()
    return request.query_params.get("api_key") or None


async def require_metrics_key(request: Request) -> None:
    """A server's or the proxy's /metrics, /v1/info, /v1/stats (and the proxy's /v1/backends):
    with --metrics-key set, that key (`Authorization: Bearer`); else, with API keys on, any
    valid API key (key names are metric labels, /v1/info names the host's paths); else open."""
    settings: MetricsKeyed = request.app.state.settings
    if settings.metrics_key is None:
        keys: KeyStore | None = getattr(request.app.state, "keys", None)  # the proxy has none
        if keys is not None and keys.enabled:
            keys.authenticate(presented_key(request), "Authorization: Bearer <API key>")
        return
    token = bearer(request)
    if token is None:
        raise MissingApiKey("this endpoint needs Authorization: Bearer <metrics key>")
    if not hmac.compare_digest(token.encode(), settings.metrics_key.get_secret_value().encode()):
        raise InvalidApiKey("the metrics key is not valid")


async def get_deadline(request: Request) -> Deadline:
    """The server's --request-timeout from the request's arrival, tightened by a shorter
    X-Request-Timeout header (a body `timeout` tightens it further in the handler). Settings
    read here, not as a dependency of their own: each costs a hop through FastAPI's
    solver on every request."""
    settings: ServeSettings = request.app.state.settings
    started = request.scope.get("state", {}).get("started")
    deadline = Deadline.start(settings.request_timeout, started)
    header = parse_timeout(request.headers.get("x-request-timeout"), "X-Request-Timeout")
    return deadline.tighten(header)


SettingsDep = Annotated[ServeSettings, Depends(get_settings)]
MetricsDep = Annotated[Metrics, Depends(get_metrics)]
HostDep = Annotated[EngineHost, Depends(get_host)]
AdmissionDep = Annotated[Admission, Depends(get_admission)]
ServiceDep = Annotated[TranslationService, Depends(get_service)]
GenerationDep = Annotated[GenerationService, Depends(get_generation)]
TranslatorDep = Annotated[Translator, Depends(get_translator)]
CallerDep = Annotated[Caller, Depends(get_caller)]
KeysDep = Annotated[KeyStore, Depends(get_keys)]
DeadlineDep = Annotated[Deadline, Depends(get_deadline)]
