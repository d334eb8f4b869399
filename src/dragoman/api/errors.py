"""Every error becomes `{"error": {"code", "message"}}` (with the headers the error carries:
Retry-After, WWW-Authenticate), mapped here and nowhere else: the exception handlers and the
edge middleware both answer through `render`. Refusals (`Rejected`) are counted here by code.
Each future API surface (LibreTranslate, DeepL, OpenAI) adds its own shape, chosen by path."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import Scope

from dragoman.errors import DragomanError, EngineDead, Rejected

log = logging.getLogger(__name__)

# Custom pydantic error types raised by our request models keep their own code.
_OWN_VALIDATION_CODES = {"empty_text"}
_HTTP_CODES = {404: "not_found", 405: "method_not_allowed", 413: "body_too_large"}


def error_response(
    status: int, code: str, message: str, headers: Mapping[str, str] | None = None
) -> JSONResponse:
    return JSONResponse(
        {"error": {"code": code, "message": message}}, status_code=status, headers=headers
    )


def render(scope: Scope, exc: DragomanError) -> JSONResponse:
    """The answer to a typed error, in the native shape."""
    if isinstance(exc, Rejected):
        metrics = getattr(scope["app"].state, "metrics", None)
        if metrics is not None:
            metrics.rejected.labels(exc.code).inc()
    return error_response(exc.status_code, exc.code, exc.message, exc.headers())


def _describe(err: dict[str, Any]) -> str:
    loc = ".".join(str(p) for p in err.get("loc", ()) if p != "body")
    return f"{loc}: {err.get('msg', 'invalid')}" if loc else str(err.get("msg", "invalid"))


async def _dragoman(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, DragomanError)
    if isinstance(exc, EngineDead):
        request.app.state.engine_host.fail(exc.message)
    return render(request.scope, exc)


async def _validation(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    errors = list(exc.errors())
    code = "invalid_request"
    for err in errors:
        if err.get("type") in _OWN_VALIDATION_CODES:
            code = err["type"]
            break
    message = "; ".join(_describe(e) for e in errors[:5]) or "invalid request"
    return error_response(422, code, message)


async def _http(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, StarletteHTTPException)
    code = _HTTP_CODES.get(exc.status_code, "http_error")
    return error_response(exc.status_code, code, str(exc.detail), exc.headers)


async def _unexpected(request: Request, exc: Exception) -> JSONResponse:
    log.exception("unhandled error on %s", request.url.path)
    return error_response(500, "internal_error", "internal server error")


def register_error_handlers(app: FastAPI) -> None:
    app.add_exception_handler(DragomanError, _dragoman)
    app.add_exception_handler(RequestValidationError, _validation)
    app.add_exception_handler(StarletteHTTPException, _http)
    app.add_exception_handler(Exception, _unexpected)
