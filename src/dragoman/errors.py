"""Typed errors. Each carries its HTTP status and a stable error code; the API maps them to
`{"error": {"code", "message"}}` in one place (api/errors.py), the CLI prints the message."""

from __future__ import annotations


class DragomanError(Exception):
    status_code = 500
    code = "internal_error"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class UnsupportedLanguage(DragomanError):
    status_code = 400
    code = "unsupported_language"


class EmptyText(DragomanError):
    status_code = 422
    code = "empty_text"


class TextTooLong(DragomanError):
    status_code = 413
    code = "text_too_long"


class TooManyItems(DragomanError):
    status_code = 413
    code = "too_many_items"


class EngineNotReady(DragomanError):
    status_code = 503
    code = "engine_not_ready"


class EngineDead(DragomanError):
    """The engine process died; the server cannot recover and reports unhealthy."""

    status_code = 503
    code = "engine_dead"


class EngineFailed(DragomanError):
    """One request failed inside a live engine (recoverable)."""

    status_code = 500
    code = "engine_error"


class ClientClosed(DragomanError):
    """The client went away before the answer; its engine requests were aborted."""

    status_code = 499
    code = "client_closed"


class ModelError(DragomanError):
    """The model could not be found, assembled, verified or converted."""

    code = "model_error"
