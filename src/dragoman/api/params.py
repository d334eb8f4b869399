"""Request parameters the way the clients of the compatible surfaces send them: a JSON object, a
form (urlencoded or multipart), and the query string of any method (TranslateYou POSTs with
everything in the URL; libretranslatepy and deepl send a form body on a GET). Later sources win:
query, then body. Form fields named in `multi` keep every value (DeepL's repeated `text`)."""

from __future__ import annotations

import json
from typing import Any

from fastapi import Request
from pydantic import BaseModel
from starlette.datastructures import UploadFile

from dragoman.errors import InvalidRequest

_FORMS = ("application/x-www-form-urlencoded", "multipart/form-data")


def media_type(request: Request) -> str:
    return request.headers.get("content-type", "").split(";", 1)[0].strip().lower()


async def read_params(request: Request, multi: frozenset[str] = frozenset()) -> dict[str, Any]:
    params: dict[str, Any] = {}
    for key in request.query_params:
        values = request.query_params.getlist(key)
        params[key] = values if key in multi else values[0]
    kind = media_type(request)
    if kind == "application/json" or kind.endswith("+json"):
        raw = await request.body()
        if raw.strip():
            try:
                data = json.loads(raw)
            except (ValueError, UnicodeDecodeError, RecursionError):
                raise InvalidRequest("Invalid JSON format") from None
            if not isinstance(data, dict):
                raise InvalidRequest("Invalid JSON format: the body must be a JSON object")
            params.update(data)
    elif kind in _FORMS:
        await request.body()  # kept: the proxy forwards the body after reading its fields
        try:
            form = await request.form()
        except Exception as exc:  # malformed multipart, too many fields
            raise InvalidRequest(f"Invalid form body: {exc}") from None
        for key in form:
            values = [v for v in form.getlist(key) if not isinstance(v, UploadFile)]
            if values:
                params[key] = values if key in multi else values[0]
    return params


def body_schema(
    model: type[BaseModel], required: bool = True, form: dict[str, Any] | None = None
) -> dict[str, Any]:
    """OpenAPI requestBody for a handler that reads its parameters itself: `model` as JSON, and
    as a form, where no field is null (a form has no null: a field is sent or left out) and
    the fields in `form` read as it says (a field read once, its first value, is no list)."""
    schema = model.model_json_schema()
    form_schema = _no_nulls(schema)
    for name, field in (form or {}).items():
        form_schema["properties"][name] = {**form_schema["properties"][name], **field}
    return {
        "requestBody": {
            "required": required,
            "content": {
                "application/json": {"schema": schema},
                "application/x-www-form-urlencoded": {"schema": form_schema},
                "multipart/form-data": {"schema": form_schema},
            },
        }
    }


def _no_nulls(schema: dict[str, Any]) -> dict[str, Any]:
    properties = {}
    for name, prop in schema.get("properties", {}).items():
        prop = dict(prop)
        options = [o for o in prop.pop("anyOf", []) if o.get("type") != "null"]
        if len(options) == 1:
            prop = {**options[0], **prop}
        elif options:
            prop["anyOf"] = options
        if "default" in prop and prop["default"] is None:
            del prop["default"]
        properties[name] = prop
    return {**schema, "properties": properties}
