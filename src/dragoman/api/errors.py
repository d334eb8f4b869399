"""Every error, in the shape and status of the API surface it was sent to, mapped here and nowhere
else: the exception handlers and the edge middleware both answer through `render`. The surface
is chosen by path:

- native (`/v1/translate`, `/v1/languages`, system): `{"error": {"code", "message"}}`;
- LibreTranslate (`/translate`, `/detect`, `/languages`, `/frontend/settings`, `/translate_file`,
  `/download_file/...`): `{"error": str}`, 400 for bad input (an unsupported file too) and a
  missing key, 403 for a bad key, 429 "Slowdown: ..." for limits;
- DeepL (`/v2/...`): `{"message": str}`, 403 for a missing or bad key, 456 for the day quota,
  400 for an unsupported file, 503 for a document's result asked for too early;
- OpenAI (`/v1/chat/...`, `/v1/models`): `{"error": {"message", "type", "param", "code"}}`,
  400 for bad input.

Refusals (`Rejected`) are counted here by code."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import Match, Route
from starlette.types import Scope

from dragoman.errors import DragomanError, EngineDead, Rejected

log = logging.getLogger(__name__)

# Custom pydantic error types raised by our request models keep their own code.
_OWN_VALIDATION_CODES = {"empty_text"}
_HTTP_CODES = {
    400: "invalid_request",  # a body FastAPI could not parse (JSON not in UTF-8)
    404: "not_found",
    405: "method_not_allowed",
    413: "body_too_large",
}
_BAD_INPUT = {
    "invalid_request",
    "empty_text",
    "unsupported_language",
    "json_too_deep",
    "unsupported_format",  # a file no reader handles: 415 on the native surface only
}

# (status, code, message) -> (status, body)
Shape = Callable[[int, str, str], tuple[int, Any]]


def _native(status: int, code: str, message: str) -> tuple[int, Any]:
    return status, {"error": {"code": code, "message": message}}


_LT_STATUS = {
    "missing_api_key": 400,  # LibreTranslate's own: "Please contact the server operator..."
    "invalid_api_key": 403,
    "text_too_long": 400,
    "too_many_items": 400,
}


def _libretranslate(status: int, code: str, message: str) -> tuple[int, Any]:
    status = 400 if code in _BAD_INPUT else _LT_STATUS.get(code, status)
    if code in ("rate_limited", "quota_exceeded", "overloaded"):
        message = f"Slowdown: {message}"
    return status, {"error": message}


_DEEPL_STATUS = {
    "missing_api_key": 403,
    "invalid_api_key": 403,
    "quota_exceeded": 456,
    "document_not_ready": 503,  # the `deepl` client's DocumentNotReadyException
}


def _deepl(status: int, code: str, message: str) -> tuple[int, Any]:
    status = 400 if code in _BAD_INPUT else _DEEPL_STATUS.get(code, status)
    return status, {"message": message}


_OPENAI_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    429: "rate_limit_error",
}


def _openai(status: int, code: str, message: str) -> tuple[int, Any]:
    if code in _BAD_INPUT:
        status = 400
    kind = _OPENAI_TYPES.get(status, "server_error" if status >= 500 else "invalid_request_error")
    return status, {"error": {"message": message, "type": kind, "param": None, "code": code}}


LIBRETRANSLATE_PATHS = frozenset(
    {"/translate", "/detect", "/languages", "/frontend/settings", "/translate_file", "/suggest"}
)
# OpenAI's own paths, the ones dragoman does not serve included: an OpenAI client asking for
# embeddings gets its 404 in the shape it parses.
_OPENAI_PREFIXES = (
    "/v1/chat",
    "/v1/completions",
    "/v1/models",
    "/v1/embeddings",
    "/v1/responses",
    "/v1/moderations",
    "/v1/audio",
    "/v1/images",
    "/v1/files",
)


def surface_of(path: str) -> str:
    if path.startswith("/v2/"):
        return "deepl"
    if path.startswith(_OPENAI_PREFIXES):
        return "openai"
    if path.rstrip("/") in LIBRETRANSLATE_PATHS or path.startswith("/download_file/"):
        return "libretranslate"
    return "native"


_SHAPES: dict[str, Shape] = {
    "native": _native,
    "libretranslate": _libretranslate,
    "deepl": _deepl,
    "openai": _openai,
}


ERROR_HEADER = "X-Dragoman-Error"


def shaped(
    path: str, status: int, code: str, message: str, headers: Mapping[str, str] | None = None
) -> JSONResponse:
    """An error in the shape of the surface that owns `path`. A message that quotes what the
    client sent is made encodable first (a lone surrogate is no character)."""
    if not message.isascii():
        message = message.encode("utf-8", "replace").decode("utf-8")
    status, body = _SHAPES[surface_of(path)](status, code, message)
    kept = dict(headers or {})
    # The code in every shape, also those whose body has none (LibreTranslate, DeepL): what
    # `dragoman route` reads to tell a full backend from a key's limit or a draining server.
    kept[ERROR_HEADER] = code
    if status != 401:  # a challenge belongs to a 401 only
        kept.pop("WWW-Authenticate", None)
    return JSONResponse(body, status_code=status, headers=kept)


def error_response(
    status: int, code: str, message: str, headers: Mapping[str, str] | None = None
) -> JSONResponse:
    """A native-shaped error (system endpoints, the router's own)."""
    return shaped("/", status, code, message, headers)


def render(scope: Scope, exc: DragomanError) -> JSONResponse:
    """The answer to a typed error, in the shape of the surface the request was sent to."""
    if isinstance(exc, Rejected):
        metrics = getattr(scope["app"].state, "metrics", None)
        if metrics is not None:
            metrics.rejected.labels(exc.code).inc()
    return shaped(scope.get("path", "/"), exc.status_code, exc.code, exc.message, exc.headers())


def _describe(err: Mapping[str, Any]) -> str:
    loc = ".".join(str(p) for p in err.get("loc", ()) if p != "body")
    return f"{loc}: {err.get('msg', 'invalid')}" if loc else str(err.get("msg", "invalid"))


def describe_errors(errors: list[Mapping[str, Any]]) -> tuple[str, str]:
    """(code, message) for a list of pydantic validation errors."""
    code = "invalid_request"
    for err in errors:
        if err.get("type") in _OWN_VALIDATION_CODES:
            code = err["type"]
            break
    return code, "; ".join(_describe(e) for e in errors[:5]) or "invalid request"


async def _dragoman(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, DragomanError)
    if isinstance(exc, EngineDead):
        request.app.state.engine_host.fail(exc.message)
    return render(request.scope, exc)


async def _validation(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    code, message = describe_errors(list(exc.errors()))
    return shaped(request.url.path, 422, code, message)


def allowed_methods(request: Request) -> str:
    """Every method some route serves at the request's path: Starlette's 405 names only the
    methods of the first route that matched the path (GET of a path whose DELETE is another
    route)."""
    methods = {
        method
        for route in request.app.router.routes
        if isinstance(route, Route) and route.matches(request.scope)[0] is not Match.NONE
        for method in route.methods or ()
    }
    return ", ".join(sorted(methods))


async def _http(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, StarletteHTTPException)
    code = _HTTP_CODES.get(exc.status_code, "http_error")
    headers = dict(exc.headers or {})
    if exc.status_code == 405:
        headers["Allow"] = allowed_methods(request) or headers.get("Allow", "")
    return shaped(request.url.path, exc.status_code, code, str(exc.detail), headers)


async def _unexpected(request: Request, exc: Exception) -> JSONResponse:
    # Starlette runs this outside every middleware, the edge's included: its request id is
    # read back from the request's state, for the log line and the answer.
    state = request.scope.get("state", {})
    rid = state.get("request_id", "-")
    log.exception("unhandled error on %s", request.url.path, extra={"request_id": rid})
    headers = {"X-Request-Id": rid} if state.get("echo_request_id") else None
    return shaped(request.url.path, 500, "internal_error", "internal server error", headers)


def register_error_handlers(app: FastAPI) -> None:
    app.add_exception_handler(DragomanError, _dragoman)
    app.add_exception_handler(RequestValidationError, _validation)
    app.add_exception_handler(StarletteHTTPException, _http)
    app.add_exception_handler(Exception, _unexpected)
