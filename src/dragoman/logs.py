"""Log lines of `dragoman serve` and `dragoman route` (and of `dragoman deploy ray`'s process, of
a `dragoman translate` that starts its engine): text (the default) or, with
`--log-format json`, one JSON object a line on stderr for every logger of the process
(dragoman's, uvicorn's, the libraries') and of vLLM's engine processes, for log shippers.

Standard library only: vLLM's engine processes import `JsonFormatter` by name from the logging
config this module hands them (`vllm_logging.json`), before anything else of dragoman runs."""

from __future__ import annotations

import contextvars
import datetime
import json
import logging
import os
import sys
from pathlib import Path
from typing import Any, Literal

LogFormat = Literal["text", "json"]

REQUEST_ID: contextvars.ContextVar[str] = contextvars.ContextVar("request_id", default="-")
"""The id of the request being served (api/edge.py sets it); `-` outside one."""

TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s [%(request_id)s]: %(message)s"
ACCESS_FIELDS = ("method", "path", "status", "seconds")
"""Structured fields an access record carries (`extra=`), kept as JSON fields. Nothing else a
record carries is: the fields stay the same from line to line, and no library's extra (a
request's text, say) reaches the log by accident."""
VLLM_CONFIG = Path(__file__).with_name("vllm_logging.json")


class RequestIdFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        if not hasattr(record, "request_id"):  # given by the logger's `extra`, else the context's
            record.request_id = REQUEST_ID.get()
        return True


class JsonFormatter(logging.Formatter):
    """`{"time", "level", "logger", "message"}`, then `request_id` inside a request, the access
    fields when given, and `exc_info` (the traceback's text) when there is one. ASCII only
    (other characters as JSON escapes): a line stays valid JSON whatever the stream's
    encoding."""

    def format(self, record: logging.LogRecord) -> str:
        created = datetime.datetime.fromtimestamp(record.created, datetime.UTC)
        line: dict[str, Any] = {
            "time": created.isoformat(timespec="milliseconds").replace("+00:00", "Z"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        rid = getattr(record, "request_id", None) or REQUEST_ID.get()
        if rid != "-":
            line["request_id"] = rid
        for name in ACCESS_FIELDS:
            if hasattr(record, name):
                line[name] = getattr(record, name)
        if record.exc_info and not record.exc_text:
            record.exc_text = self.formatException(record.exc_info)
        if record.exc_text:
            line["exc_info"] = record.exc_text
        if record.stack_info:
            line["stack_info"] = self.formatStack(record.stack_info)
        return json.dumps(line, default=str)


def setup(log_format: LogFormat) -> None:
    """Format the lines of the root logger's handlers (set up by the CLI), each naming its
    request; with `json`, also give vLLM's engine processes the same formatter."""
    formatter = JsonFormatter() if log_format == "json" else logging.Formatter(TEXT_FORMAT)
    # vLLM's own lines went to stdout (its default stream): `dragoman translate ... > out.txt`
    # with an engine started here wrote 54 of them around the translation. Every log line of
    # ours is on stderr; stdout holds only what a command answers.
    os.environ.setdefault("VLLM_LOGGING_STREAM", "ext://sys.stderr")
    for handler in logging.getLogger().handlers:
        handler.addFilter(RequestIdFilter())
        handler.setFormatter(formatter)
    if log_format == "json":
        logging.captureWarnings(True)  # Python's warnings as records, not bare stderr text
        _json_for_vllm()


def _json_for_vllm() -> None:
    """vLLM applies the dictConfig file named here, in this process when the engine is built
    and in each engine process it starts (its LoggingConfig travels with the engine's config).
    A file the operator named, or vLLM's logging turned off, is theirs to keep: vLLM refuses a
    config file with its logging off."""
    if os.environ.get("VLLM_CONFIGURE_LOGGING", "1") == "0":
        return
    os.environ.setdefault("VLLM_LOGGING_CONFIG_PATH", str(VLLM_CONFIG))


def json_handler() -> logging.Handler:
    """The handler of vLLM's logging config (`vllm_logging.json`), made when vLLM applies it:
    in the server process as the engine is built, in each engine process as it starts; by then
    torch (and transformers) have put text handlers of their own on their loggers, which do
    not pass records on. They are given the JSON formatter, on stderr, too; Python's warnings
    become records there as well."""
    logging.captureWarnings(True)
    for logger in list(logging.Logger.manager.loggerDict.values()):
        if isinstance(logger, logging.Logger):
            for handler in logger.handlers:
                _to_json(handler)
    return _to_json(logging.StreamHandler(sys.stderr))


def _to_json(handler: logging.Handler) -> logging.Handler:
    """A handler writing to the process's stderr or stdout (not a file) writes JSON to stderr."""
    if type(handler) is logging.StreamHandler and handler.stream in (sys.stdout, sys.stderr):
        handler.setStream(sys.stderr)
        handler.setFormatter(JsonFormatter())
    return handler


def uvicorn_log_config(log_format: LogFormat) -> dict[str, Any] | None:
    """uvicorn's `log_config`: its own (text) handlers by default; none for JSON, so its
    records reach the root logger's JSON handler."""
    if log_format == "json":
        return None
    from uvicorn.config import LOGGING_CONFIG

    return LOGGING_CONFIG
