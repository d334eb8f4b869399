"""Typed errors. Each carries its HTTP status and a stable error code; the API maps them to each
surface's shape and status in one place (api/errors.py), the CLI prints the message."""

from __future__ import annotations


class DragomanError(Exception):
    status_code = 500
    code = "internal_error"

    def __init__(self, message: str, retry_after: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.retry_after = retry_after

    def headers(self) -> dict[str, str]:
        """Response headers the error carries (Retry-After, WWW-Authenticate)."""
        return {"Retry-After": str(self.retry_after)} if self.retry_after is not None else {}


class UnsupportedLanguage(DragomanError):
    status_code = 400
    code = "unsupported_language"


class EmptyText(DragomanError):
    status_code = 422
    code = "empty_text"


class InvalidRequest(DragomanError):
    status_code = 422
    code = "invalid_request"


class TextTooLong(DragomanError):
    status_code = 413
    code = "text_too_long"


class TooManyItems(DragomanError):
    status_code = 413
    code = "too_many_items"


class ContextTooLong(DragomanError):
    """A chat's messages leave the model no room to answer (OpenAI's code for it)."""

    status_code = 400
    code = "context_length_exceeded"


class ModelNotFound(DragomanError):
    status_code = 404
    code = "model_not_found"


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


class DeadlineExceeded(DragomanError):
    """The request's deadline passed while its texts were in the engine; they were aborted."""

    status_code = 504
    code = "deadline_exceeded"


class ShutDown(DragomanError):
    """Admitted work aborted because the server stopped before it finished (a shutdown past
    its drain, or an interrupt). The code is the draining server's: go elsewhere or retry."""

    status_code = 503
    code = "draining"


class ConfigError(DragomanError):
    """A file the operator wrote (API keys) is malformed, or a command was given wrong input.
    The CLI exits 2 on it, as on a bad flag: the input has to change, not the moment."""

    code = "config_error"


class Unreachable(DragomanError):
    """A server a command works against did not answer (the CLI exits 1: try again later)."""

    status_code = 502
    code = "unreachable"


class ModelError(DragomanError):
    """The model could not be found, assembled, verified or converted."""

    code = "model_error"


class Rejected(DragomanError):
    """Refused by a limit or policy before any engine work; counted by code in
    `dragoman_rejected_total`."""


class Overloaded(Rejected):
    status_code = 429
    code = "overloaded"


class RateLimited(Rejected):
    status_code = 429
    code = "rate_limited"


class QuotaExceeded(Rejected):
    """The key's characters for the day are used up (DeepL's surface answers 456)."""

    status_code = 429
    code = "quota_exceeded"


class Draining(Rejected):
    status_code = 503
    code = "draining"


class DeadlineUnmeetable(Rejected):
    """The queue ahead is longer than the request's deadline: refused rather than computed
    and thrown away."""

    status_code = 503
    code = "deadline_unmeetable"


class MissingApiKey(Rejected):
    status_code = 401
    code = "missing_api_key"

    def headers(self) -> dict[str, str]:
        return {"WWW-Authenticate": 'Bearer realm="dragoman"'}


class InvalidApiKey(Rejected):
    status_code = 401
    code = "invalid_api_key"

    def headers(self) -> dict[str, str]:
        return {"WWW-Authenticate": 'Bearer realm="dragoman", error="invalid_token"'}


class BodyTooLarge(Rejected):
    status_code = 413
    code = "body_too_large"


class BodyTimeout(Rejected):
    status_code = 408
    code = "body_timeout"


class HeadersTooLarge(Rejected):
    status_code = 431
    code = "headers_too_large"


class JsonTooDeep(Rejected):
    status_code = 400
    code = "json_too_deep"


class UnsupportedFormat(DragomanError):
    """A file whose kind no reader handles (the message names the supported ones)."""

    status_code = 415
    code = "unsupported_format"


class BadFile(DragomanError):
    """A file that cannot be read as what it claims to be: corrupt, truncated, encrypted,
    empty, an archive past its bounds, XML with entities."""

    status_code = 400
    code = "bad_file"


class FileTooLarge(DragomanError):
    status_code = 413
    code = "file_too_large"


class JobNotFound(DragomanError):
    """No document job by that id (or not the caller's, or expired)."""

    status_code = 404
    code = "document_not_found"


class JobNotReady(DragomanError):
    """A document job's result asked for before it is done (or after it failed)."""

    status_code = 409
    code = "document_not_ready"


class JobStoreFull(Rejected):
    """The document store holds as many jobs or bytes as it may: a new upload waits until
    finished ones expire."""

    status_code = 503
    code = "document_store_full"


class JobStoreFailed(DragomanError):
    """The document store (--documents-url) did not answer in time, or failed."""

    status_code = 503
    code = "document_store_failed"


class JobFailed(DragomanError):
    """A document job waited on (LibreTranslate's /translate_file) failed: the message says
    why (its own error's type, where the job ran here, is raised instead)."""

    code = "document_failed"
