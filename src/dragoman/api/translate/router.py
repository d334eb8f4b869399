"""Thin handlers: parse, call the service, return."""

from __future__ import annotations

from fastapi import APIRouter, Request

from dragoman.api._disconnect import cancel_on_disconnect
from dragoman.api.deps import CallerDep, DeadlineDep, ServiceDep, TranslatorDep
from dragoman.api.openapi import NATIVE_BODY, errors
from dragoman.api.translate import serving
from dragoman.api.translate.protocol import (
    Language,
    LanguagesResponse,
    NativeError,
    PairInfo,
    TranslateRequest,
    TranslateResponse,
)
from dragoman.languages import NAMES

router = APIRouter(prefix="/v1", tags=["translation"])

_ERRORS = errors(
    NativeError,
    {
        400: "Unknown or unsupported language, or source = target; JSON nested too deep",
        401: "Missing or invalid API key (when keys are on)",
        413: "Text too long, too many texts, or body too large",
        422: "Empty text or malformed request",
        429: "Server at its admission limit, or the key's rate limit (Retry-After)",
        503: "Engine not ready or stopped, draining, or deadline unmeetable",
        504: "The request's deadline passed; its texts were aborted",
    },
)
_LANGUAGE_ERRORS = errors(NativeError, {**NATIVE_BODY, 503: "Engine not ready or stopped"})


@router.post(
    "/translate",
    response_model=TranslateResponse,
    response_model_exclude_none=True,
    responses=_ERRORS,
)
async def translate(
    body: TranslateRequest,
    request: Request,
    caller: CallerDep,
    deadline: DeadlineDep,
    service: ServiceDep,
) -> TranslateResponse:
    """Translate one text or a list of texts. Each text is its own engine request, so texts of
    all clients share the engine's continuous batch. A request is admitted whole or refused
    with 429 and Retry-After; `X-Request-Timeout` (seconds) or `timeout` bounds its time."""
    return await cancel_on_disconnect(request, serving.translate(body, service, caller, deadline))


@router.get(
    "/languages",
    response_model=LanguagesResponse,
    response_model_exclude_none=True,
    responses=_LANGUAGE_ERRORS,
)
async def languages(translator: TranslatorDep) -> LanguagesResponse:
    """The languages the loaded model serves, as ISO 639-1 codes with English names."""
    pairs = getattr(translator, "pairs", None)
    tiers = getattr(translator, "tiers", {})
    return LanguagesResponse(
        model=translator.model_name,
        languages=[Language(code=c, name=NAMES[c]) for c in translator.languages],
        pairs=None
        if pairs is None
        else [
            PairInfo(
                source=s,
                target=t,
                model=m,
                tiers=tiers[(s, t)] if len(tiers.get((s, t), {})) > 1 else None,
            )
            for (s, t), m in sorted(pairs.items())
        ],
    )
