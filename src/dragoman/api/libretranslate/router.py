"""Thin handlers for LibreTranslate's endpoints: read the parameters wherever the client put
them, call the adapter, return. Errors take LibreTranslate's shape in api/errors.py."""

from __future__ import annotations

from fastapi import APIRouter, Request

from dragoman.api._disconnect import cancel_on_disconnect
from dragoman.api.deps import DeadlineDep, KeysDep, ServiceDep, SettingsDep, TranslatorDep
from dragoman.api.libretranslate import serving
from dragoman.api.libretranslate.protocol import (
    Q_TEXT,
    DetectedLanguage,
    LtDetectRequest,
    LtError,
    LtLanguage,
    LtTranslateRequest,
    LtTranslateResponse,
)
from dragoman.api.openapi import errors
from dragoman.api.params import body_schema, media_type, read_params

router = APIRouter(tags=["libretranslate"])

# As LibreTranslate answers them: bad input and a missing key 400, a bad key 403, limits 429.
_BODY = {400: "A body nested too deep or malformed"}
_ERRORS = errors(
    LtError,
    {
        400: "Bad parameters, unsupported language or format, text too long, missing API key",
        403: "Invalid API key",
        429: "Slowdown: the key's limits or the server's admission limit",
        503: "Engine not ready, draining, or deadline unmeetable",
        504: "The request's deadline passed; its texts were aborted",
    },
)
_DETECT_ERRORS = {k: v for k, v in _ERRORS.items() if k != 504}
_READ_ERRORS = errors(LtError, {**_BODY, 503: "Engine not ready or stopped"})
# libretranslatepy sends its api_key as a form on GET /languages: taken, and not read.
_ANY_BODY = {
    "requestBody": {
        "required": False,
        "description": "Not read (libretranslatepy sends its api_key here)",
        "content": {
            kind: {"schema": {}}
            for kind in ("application/x-www-form-urlencoded", "application/json")
        },
    }
}


@router.post(
    "/translate",
    response_model=LtTranslateResponse,
    response_model_exclude_none=True,
    responses=_ERRORS,
    openapi_extra=body_schema(LtTranslateRequest, form={"q": Q_TEXT}),
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
    responses=_DETECT_ERRORS,
    openapi_extra=body_schema(LtDetectRequest, form={"q": Q_TEXT}),
)
async def detect(request: Request, service: ServiceDep, keys: KeysDep) -> list[DetectedLanguage]:
    """Up to three candidate languages, confidence 0-100."""
    return await serving.detect(await read_params(request), service, keys)


@router.get(
    "/languages",
    response_model=list[LtLanguage],
    responses=_READ_ERRORS,
    openapi_extra=_ANY_BODY,
)
async def languages(translator: TranslatorDep) -> list[LtLanguage]:
    """Served languages, each with the languages it translates into."""
    return serving.languages(translator)


@router.get("/frontend/settings", responses=_READ_ERRORS)
async def frontend_settings(
    translator: TranslatorDep, keys: KeysDep, settings: SettingsDep
) -> dict[str, object]:
    return serving.frontend_settings(translator, keys, settings.max_text_chars)
