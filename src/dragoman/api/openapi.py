"""What the OpenAPI document says that FastAPI cannot see for itself: every status an operation
can answer, each in its surface's own error shape (api/errors.py renders them all), and the
language codes a surface reads. tests/unit/api/test_openapi_fuzz.py holds the document to it."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from fastapi import FastAPI
from pydantic import BaseModel

# What the edge (api/edge.py) and the error mapping answer to any request, before or after
# routing: a GET with a body is read and bounded too.
EDGE: dict[int, str] = {
    408: "The request body did not arrive within --body-timeout",
    413: "Body over --max-body-bytes",
    431: "Request head over --max-header-bytes",
    500: "An unexpected error (logged with the request id)",
}

# The native shape's refusals of a JSON body, on any method (api/edge.py).
NATIVE_BODY: dict[int, str] = {
    400: "A JSON body nested deeper than --max-json-depth",
    422: "A malformed body, or one holding a lone surrogate",
}


def errors(model: type[BaseModel], statuses: Mapping[int, str]) -> dict[int | str, Any]:
    """`responses=` of an operation: `statuses` and the edge's, each in `model`'s shape (which
    also keeps FastAPI from promising its own 422 body, which no surface answers)."""
    table = {**EDGE, **statuses}
    return {status: {"description": table[status], "model": model} for status in sorted(table)}


def one_of(codes: list[str]) -> dict[str, Any]:
    """A Field's `json_schema_extra` naming the values a string takes (read as it is
    documented; the handler may read more spellings)."""
    return {"enum": list(dict.fromkeys(codes))}


_KEPT = {"title", "description", "default", "examples"}


def exactly(**schema: Any) -> Callable[[dict[str, Any]], None]:
    """A Field's `json_schema_extra` saying what the field takes in place of what pydantic
    inferred from its type (a validator reads more than the type says, or the type more than
    the handler accepts); title, description and default kept."""

    def patch(inferred: dict[str, Any]) -> None:
        for key in set(inferred) - _KEPT:
            del inferred[key]
        inferred.update(schema)

    return patch


# `split_sentences` as DeepL's clients send it (and the native API reads it alike): the
# strings, the numbers 0 and 1, or null.
SPLIT = exactly(
    anyOf=[
        {"type": "string", "enum": ["0", "1", "nonewlines"]},
        {"type": "integer", "enum": [0, 1]},
        {"type": "null"},
    ]
)


def _is_fastapis_422(response: dict[str, Any]) -> bool:
    schema = response.get("content", {}).get("application/json", {}).get("schema", {})
    return str(schema.get("$ref", "")).endswith("/HTTPValidationError")


def serve_document(app: FastAPI) -> None:
    """`app`'s /openapi.json without the 422 FastAPI adds to each operation that has parameters
    and declares none: its body (HTTPValidationError) is one no surface answers, as api/errors.py
    renders every validation error in its surface's shape and status."""
    build = app.openapi

    def openapi() -> dict[str, Any]:
        fresh = app.openapi_schema is None
        document = build()
        if fresh:
            for operations in document.get("paths", {}).values():
                for operation in operations.values():
                    responses = operation.get("responses", {})
                    if _is_fastapis_422(responses.get("422", {})):
                        del responses["422"]
            schemas = document.get("components", {}).get("schemas", {})
            for name in ("HTTPValidationError", "ValidationError"):
                schemas.pop(name, None)
        return document

    app.openapi = openapi  # type: ignore[method-assign]


# A character str.strip keeps (its white space spelled out: regex dialects differ on \s), so
# a string holding one is no blank text.
NOT_BLANK = r"[^\t\n\x0b\x0c\r\x1c-\x1f \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]"
# A glossary term as service/glossary.py checks it: no control character or line break,
# something besides white space, at most 200 characters once the white space around it is
# stripped (str.strip's white space; each class spelled out, as regex dialects differ on \s).
_CONTROL = r"\x00-\x1f\x7f-\x9f\u2028\u2029"
_SPACE = r" \u00a0\u1680\u2000-\u200a\u202f\u205f\u3000"
_SEEN = rf"[^{_CONTROL}{_SPACE}]"
TERM = rf"[{_SPACE}]*{_SEEN}(?:[^{_CONTROL}]{{0,198}}{_SEEN})?[{_SPACE}]*"
# Entries, as service/glossary.py `parse_entries` reads them: lines, blank ones skipped, at
# least one entry. tsv: `source<TAB>target` lines (CRLF, LF or CR ends); csv: rows of two
# terms, or three (the third ignored), none quoted or holding a comma (CRLF or LF ends). What
# a reader may send besides (quoted fields, a row's language pair) is not promised here.
_BLANK = rf"[\t\x0b\x0c\x1c-\x1f\x85{_SPACE}]*"
_CSV_SEEN = rf"[^{_CONTROL}{_SPACE},]"
_CSV_TERM = (
    rf"[{_SPACE}]*[^{_CONTROL}{_SPACE},\"](?:[^{_CONTROL},]{{0,198}}{_CSV_SEEN})?[{_SPACE}]*"
)


def _entries(entry: str, eol: str, blank: str) -> str:
    return rf"^\ufeff?(?:{blank}{eol})*{entry}(?:{eol}(?:{entry}|{blank}))*$"


TSV_ENTRIES = _entries(rf"{TERM}\t{TERM}", r"(?:\r\n|\n|\r)", _BLANK)
CSV_ENTRIES = _entries(
    rf"{_CSV_TERM},{_CSV_TERM}(?:,[^{_CONTROL},]*)?", r"\r?\n", _BLANK.replace("]*", ",]*")
)


def differ(source: str, target: str, spellings: list[tuple[list[str], list[str]]]) -> Any:
    """A model's `json_schema_extra`: its `source` and `target` are not one language, each
    language named by its source and target spellings (the handler refuses a pair of one)."""

    def patch(schema: dict[str, Any]) -> None:
        schema["not"] = {
            "anyOf": [
                {
                    "properties": {source: {"enum": s}, target: {"enum": t}},
                    "required": [source, target],
                }
                for s, t in spellings
            ]
        }

    return patch


def inline(model: type[BaseModel]) -> dict[str, Any]:
    """`model`'s JSON schema with no reference: for a place FastAPI does not gather models from
    (an event of a stream)."""
    schema = model.model_json_schema()
    defs = schema.pop("$defs", {})

    def resolve(node: Any) -> Any:
        if isinstance(node, dict):
            ref = node.get("$ref", "")
            if ref.startswith("#/$defs/"):
                return resolve(defs[ref.removeprefix("#/$defs/")])
            return {k: resolve(v) for k, v in node.items()}
        if isinstance(node, list):
            return [resolve(v) for v in node]
        return node

    resolved: dict[str, Any] = resolve(schema)
    return resolved


def event_stream(description: str, *events: type[BaseModel], done: str) -> dict[str, Any]:
    """A 200 of server-sent events (OpenAPI 3.1: `schema` is one event): each `data` one of
    `events` as JSON, the last `done`."""
    data = {
        "anyOf": [
            {"const": done},
            {
                "type": "string",
                "contentMediaType": "application/json",
                "contentSchema": {"anyOf": [inline(e) for e in events]},
            },
        ]
    }
    event = {"type": "object", "required": ["data"], "properties": {"data": data}}
    return {"description": description, "content": {"text/event-stream": {"schema": event}}}
