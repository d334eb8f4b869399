"""Thin handlers for DeepL's v2 endpoints. The key is DeepL's header, `Authorization:
DeepL-Auth-Key <key>` (Bearer works too); errors take DeepL's shape in api/errors.py (403 for a
missing or bad key, 456 for the day's quota, 429 when full)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Request

from dragoman.api._disconnect import cancel_on_disconnect
from dragoman.api.deepl import serving
from dragoman.api.deepl.protocol import (
    DeepLLanguage,
    DeepLTranslateRequest,
    DeepLTranslateResponse,
    DeepLUsage,
)
from dragoman.api.deps import DeadlineDep, KeysDep, ServiceDep, TranslatorDep
from dragoman.api.params import body_schema, read_params
from dragoman.service.keys import Caller

router = APIRouter(prefix="/v2", tags=["deepl"])

_ERRORS = {
    400: {"description": "Bad parameters, unsupported language or option"},
    403: {"description": "Missing or invalid key"},
    413: {"description": "Text or body too large"},
    429: {"description": "Too many requests: the server's admission limit or the key's rate"},
    456: {"description": "The key's characters for the day are used up"},
    503: {"description": "Engine not ready, draining"},
}


async def deepl_caller(request: Request, keys: KeysDep) -> Caller:
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    raw = token.strip() if scheme.lower() in ("deepl-auth-key", "bearer") else None
    return keys.authenticate(raw or None, "Authorization: DeepL-Auth-Key <key>")


CallerDep = Annotated[Caller, Depends(deepl_caller)]


@router.post(
    "/translate",
    response_model=DeepLTranslateResponse,
    response_model_exclude_none=True,
    responses=_ERRORS,  # type: ignore[arg-type]
    openapi_extra=body_schema(DeepLTranslateRequest),
)
async def translate(
    request: Request, caller: CallerDep, service: ServiceDep, deadline: DeadlineDep
) -> DeepLTranslateResponse:
    """DeepL's translate: JSON or form (repeated `text`); no `source_lang` detects each text's."""
    params = await read_params(request, multi=frozenset({"text", "ignore_tags", "glossary_ids"}))
    glossaries = request.app.state.glossaries
    return await cancel_on_disconnect(
        request, serving.translate(params, service, glossaries, caller, deadline)
    )


@router.get("/languages", response_model=list[DeepLLanguage], response_model_exclude_none=True)
@router.post(
    "/languages",
    response_model=list[DeepLLanguage],
    response_model_exclude_none=True,
    include_in_schema=False,
)
async def languages(
    request: Request, caller: CallerDep, translator: TranslatorDep
) -> list[DeepLLanguage]:
    """Source languages, or with `type=target` (query or form body, even on a GET) targets."""
    params = await read_params(request)
    return serving.languages(translator, str(params.get("type", "source")))


@router.get("/usage", response_model=DeepLUsage)
@router.post("/usage", response_model=DeepLUsage, include_in_schema=False)
async def usage(caller: CallerDep, service: ServiceDep) -> DeepLUsage:
    """The key's characters today (UTC) and its day quota (--key-chars-per-day)."""
    return serving.usage(service.limits, caller)
