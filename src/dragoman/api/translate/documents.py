"""The native document API: upload a file (202 and the job), poll it, fetch the translated file,
delete it (a running job is stopped, its engine requests aborted). A job's `id` is its handle:
the id and its key in one, all a client needs to read it (with keys on, the API key that sent
it reads it by the id alone). Formats, limits and the store: docs/documents.md."""

from __future__ import annotations

import datetime as dt
import json
from typing import Any, Literal

from fastapi import APIRouter, Request, Response
from pydantic import BaseModel, Field, ValidationError

from dragoman.api.deps import CallerDep
from dragoman.api.errors import describe_errors
from dragoman.api.uploads import (
    FILE_RESPONSE,
    NATIVE_ERROR,
    JobsDep,
    errors,
    file_response,
    one_of,
    read_upload,
    upload_body,
)
from dragoman.engine.protocol import Quality
from dragoman.errors import InvalidRequest
from dragoman.jobs.record import JobRecord, split_handle
from dragoman.jobs.runner import Ask
from dragoman.languages import NAMES
from dragoman.service.documents import TextOptions
from dragoman.service.glossary import check_entries

router = APIRouter(prefix="/v1", tags=["documents"])

CODES = sorted(NAMES)
_ANY = {401: "Missing or invalid API key (when keys are on)"}
_READ = {**_ANY, 404: "No document by that id (or not yours, or expired)"}
_STORE = {503: "The document store (--documents-url) failing"}
_ERRORS = errors(
    NATIVE_ERROR,
    {
        **_ANY,
        400: "A language not served, the target's as source; a file that is not what it claims "
        "to be (bad_file)",
        413: "The file over --max-file-bytes",
        415: "A file type no reader handles (the message names those supported)",
        422: "A missing file or target_lang, a malformed form or glossary",
        503: "Engine not ready, draining, the document store full (Retry-After) or failing",
    },
)


class DocumentForm(BaseModel):
    target_lang: str = Field(description="ISO 639-1 code to translate into.")
    source_lang: str = Field(
        default="auto", description="ISO 639-1 code of the document's language, or auto."
    )
    glossary: str | None = Field(
        default=None, description='Terms as a JSON object: {"source term": "target term"}.'
    )
    quality: Quality | None = Field(default=None, description="fast or best (quality tiers).")


_FIELDS: dict[str, dict[str, Any]] = {
    "target_lang": one_of(CODES, "ISO 639-1 code to translate into."),
    "source_lang": one_of(["auto", *CODES], "ISO 639-1 code, or auto (the default)."),
    "glossary": {
        "type": "string",
        "contentMediaType": "application/json",
        "contentSchema": {
            "type": "object",
            "additionalProperties": {"type": "string", "minLength": 1},
            "propertyNames": {"minLength": 1},
        },
        "description": 'Terms, a JSON object: {"source term": "target term"}.',
    },
    "quality": one_of(["fast", "best"]),
}


class DocumentLinks(BaseModel):
    self: str
    result: str


class DocumentJob(BaseModel):
    id: str = Field(description="The job's handle: all it takes to read it.")
    status: Literal["queued", "translating", "done", "error"]
    filename: str
    format: str
    source_lang: str | None = Field(description="As given; null: detected.")
    target_lang: str
    segments_total: int
    segments_done: int
    characters: int
    billed_characters: int
    seconds_remaining: int | None = Field(description="An estimate while it translates.")
    error: str | None = Field(description="Why it failed (status error).")
    created: str
    expires: str | None = Field(description="When a finished job is removed.")
    links: DocumentLinks


def _when(seconds: float | None) -> str | None:
    if seconds is None:
        return None
    return dt.datetime.fromtimestamp(seconds, dt.UTC).isoformat(timespec="seconds")


def _job(record: JobRecord, handle: str, ttl: float) -> DocumentJob:
    path = f"/v1/documents/{handle}"
    return DocumentJob(
        id=handle,
        status=record.status,
        filename=record.filename,
        format=record.format,
        source_lang=record.source,
        target_lang=record.target,
        segments_total=record.segments_total,
        segments_done=record.segments_done,
        characters=record.characters,
        billed_characters=record.billed_characters,
        seconds_remaining=record.seconds_remaining(),
        error=record.error,
        created=_when(record.created) or "",
        expires=_when(record.expires(ttl)),
        links=DocumentLinks(self=path, result=f"{path}/result"),
    )


def _ask(form: dict[str, str]) -> Ask:
    try:
        req = DocumentForm.model_validate(form)
    except ValidationError as exc:
        raise InvalidRequest(describe_errors(list(exc.errors()))[1]) from None
    terms: dict[str, str] = {}
    if req.glossary:
        try:
            terms = json.loads(req.glossary)
        except ValueError:
            raise InvalidRequest("glossary: not a JSON object") from None
        if not isinstance(terms, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in terms.items()
        ):
            raise InvalidRequest('glossary: a JSON object of strings, {"term": "translation"}')
    source = req.source_lang.strip().lower()
    return Ask(
        None if source == "auto" else source,
        req.target_lang.strip().lower(),
        TextOptions(glossary=check_entries(tuple(terms.items()))),
        req.quality,
    )


@router.post(
    "/documents",
    status_code=202,
    response_model=DocumentJob,
    responses=_ERRORS,
    openapi_extra=upload_body(_FIELDS, ["target_lang"]),
)
async def submit(
    request: Request, response: Response, caller: CallerDep, jobs: JobsDep
) -> DocumentJob:
    """Upload a file to translate in the background (multipart: `file`, `target_lang`,
    optional `source_lang`, `glossary`, `quality`). The answer (202) is the job; poll its
    `links.self` until `status` is done, then fetch `links.result`."""
    upload = await read_upload(request)
    if upload.data is None or upload.filename is None:
        raise InvalidRequest("file: a multipart `file` part is required")
    ask = _ask(upload.fields)
    record, key = await jobs.submit(upload.filename, upload.data, ask, caller)
    handle = record.id + key
    response.headers["Location"] = f"/v1/documents/{handle}"
    return _job(record, handle, jobs.settings.documents_ttl)


@router.get(
    "/documents/{document_id}",
    response_model=DocumentJob,
    responses=errors(NATIVE_ERROR, {**_READ, **_STORE}),
)
async def status(document_id: str, caller: CallerDep, jobs: JobsDep) -> DocumentJob:
    """The job: its status, progress and, once failed, why."""
    job_id, key = split_handle(document_id)
    record = await jobs.get(job_id, key, caller)
    return _job(record, document_id, jobs.settings.documents_ttl)


@router.get(
    "/documents/{document_id}/result",
    response_class=Response,
    responses={
        200: FILE_RESPONSE,
        **errors(
            NATIVE_ERROR,
            {**_READ, **_STORE, 409: "Not translated yet, or it failed (the message says which)"},
        ),
    },
)
async def result(document_id: str, caller: CallerDep, jobs: JobsDep) -> Response:
    """The translated file, in the uploaded file's format (409 until the job is done)."""
    job_id, key = split_handle(document_id)
    record, data = await jobs.result(job_id, key, caller)
    return file_response(record, data)


@router.delete(
    "/documents/{document_id}",
    status_code=204,
    response_class=Response,
    responses=errors(NATIVE_ERROR, {**_READ, **_STORE}),
)
async def delete(document_id: str, caller: CallerDep, jobs: JobsDep) -> Response:
    """Stop the job if it is still translating (its engine requests aborted) and remove it."""
    job_id, key = split_handle(document_id)
    await jobs.delete(job_id, key, caller)
    return Response(status_code=204)
