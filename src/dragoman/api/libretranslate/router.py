"""Thin handlers for LibreTranslate's endpoints: read the parameters wherever the client put
them, call the adapter, return. Errors take LibreTranslate's shape in api/errors.py."""

from __future__ import annotations

from fastapi import APIRouter, Request

from dragoman.api._disconnect import cancel_on_disconnect
from dragoman.api.deps import DeadlineDep, KeysDep, ServiceDep, SettingsDep, TranslatorDep
from dragoman.api.libretranslate import serving
from dragoman.api.libretranslate.protocol import (
    DetectedLanguage,
    LtDetectRequest,
    LtLanguage,
    LtTranslateRequest,
    LtTranslateResponse,
)
from dragoman.api.params import body_schema, media_type, read_params

router = APIRouter(tags=["libretranslate"])

_ERRORS = {
    400: {"description": "Bad parameters, unsupported language or format, missing API key"},
    403: {"description": "Invalid API key"},
    429: {"description": "Slowdown: the key's limits or the server's admission limit"},
    503: {"description": "Engine not ready, draining"},
}


@router.post(
    "/translate",
    response_model=LtTranslateResponse,
    response_model_exclude_none=True,
    responses=_ERRORS,  # type: ignore[arg-type]
    openapi_extra=body_schema(LtTranslateRequest),
)
async def translate(
    request: Request, service: ServiceDep, keys: KeysDep, deadline: DeadlineDep
) -> LtTranslateResponse:
    """LibreTranslate's translate: `q` one text or a list (texts run concurrently in the
    engine); `source=auto` detects each text's language on its own."""
    params = await read_params(request)
    if isinstance(params.get("q"), str) and "json" not in media_type(request):
        params["q"] = params["q"].replace("\r\n", "\n").replace("\r", "\n")  # as LibreTranslate
    return await cancel_on_disconnect(request, serving.translate(params, service, keys, deadline))


@router.post(
    "/detect",
    response_model=list[DetectedLanguage],
    responses=_ERRORS,  # type: ignore[arg-type]
    openapi_extra=body_schema(LtDetectRequest),
)
async def detect(request: Request, service: ServiceDep, keys: KeysDep) -> list[DetectedLanguage]:
    """Up to three candidate languages, confidence 0-100."""
    return await serving.detect(await read_params(request), service, keys)


@router.get("/languages", response_model=list[LtLanguage])
async def languages(translator: TranslatorDep) -> list[LtLanguage]:
    """Served languages, each with the languages it translates into."""
    return serving.languages(translator)


@router.get("/frontend/settings")
async def frontend_settings(
    translator: TranslatorDep, keys: KeysDep, settings: SettingsDep
) -> dict[str, object]:
    return serving.frontend_settings(translator, keys, settings.max_text_chars)
