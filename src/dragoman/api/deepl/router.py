"""Thin handlers for DeepL's v2 endpoints. The key is DeepL's header, `Authorization:
DeepL-Auth-Key <key>` (Bearer works too); errors take DeepL's shape in api/errors.py (403 for a
missing or bad key, 456 for the day's quota, 429 when full)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Request

from dragoman.api._disconnect import cancel_on_disconnect
from dragoman.api.deepl import serving
from dragoman.api.deepl.protocol import (
    FORM_TEXT,
    DeepLError,
    DeepLLanguage,
    DeepLLanguagesRequest,
    DeepLTranslateRequest,
    DeepLTranslateResponse,
    DeepLUsage,
)
from dragoman.api.deps import DeadlineDep, KeysDep, ServiceDep, TranslatorDep
from dragoman.api.openapi import errors
from dragoman.api.params import body_schema, read_params
from dragoman.service.keys import Caller

router = APIRouter(prefix="/v2", tags=["deepl"])

# As DeepL answers them: bad input 400, a missing or bad key 403, the day's quota 456. Any
# request: its body is checked before routing (api/edge.py), and it needs a key when keys are on.
ANY_REQUEST = {400: "A body nested too deep or malformed", 403: "Missing or invalid key"}
_ERRORS = errors(
    DeepLError,
    {
        **ANY_REQUEST,
        400: "Bad parameters, unsupported language or option",
        404: "No glossary by that glossary_id (or not this key's)",
        413: "Text or body too large",
        429: "Too many requests: the server's admission limit or the key's rate",
        456: "The key's characters for the day are used up",
        503: "Engine not ready, draining, deadline unmeetable, or the glossary store failing",
        504: "The request's deadline passed; its texts were aborted",
    },
)
_LANGUAGE_ERRORS = errors(
    DeepLError, {**ANY_REQUEST, 400: "type neither source nor target", 503: "Engine not ready"}
)
# `type` in the query, or (as the deepl client sends it, even on a GET) in a form body.
_LANGUAGE_TYPE = {
    "parameters": [
        {
            "name": "type",
            "in": "query",
            "required": False,
            "schema": {"type": "string", "enum": ["source", "target"], "default": "source"},
        }
    ],
    **body_schema(DeepLLanguagesRequest, required=False),
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
    responses=_ERRORS,
    openapi_extra=body_schema(DeepLTranslateRequest, form={"text": FORM_TEXT}),
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


@router.get(
    "/languages",
    response_model=list[DeepLLanguage],
    response_model_exclude_none=True,
    responses=_LANGUAGE_ERRORS,
    openapi_extra=_LANGUAGE_TYPE,
)
@router.post(  # as DeepL and its mock serve it
    "/languages",
    response_model=list[DeepLLanguage],
    response_model_exclude_none=True,
    responses=_LANGUAGE_ERRORS,
    openapi_extra=_LANGUAGE_TYPE,
)
async def languages(
    request: Request, caller: CallerDep, translator: TranslatorDep
) -> list[DeepLLanguage]:
    """Source languages, or with `type=target` (query or form body, even on a GET) targets."""
    params = await read_params(request)
    for given in request.query_params.getlist("type"):  # the body's wins, each is checked
        serving.language_kind(given)
    return serving.languages(translator, str(params.get("type", "source")))


@router.get("/usage", response_model=DeepLUsage, responses=errors(DeepLError, ANY_REQUEST))
# as DeepL and its mock serve it
@router.post("/usage", response_model=DeepLUsage, responses=errors(DeepLError, ANY_REQUEST))
async def usage(caller: CallerDep, service: ServiceDep) -> DeepLUsage:
    """The key's characters today (UTC) and its day quota (--key-chars-per-day)."""
    return serving.usage(service.limits, caller)
