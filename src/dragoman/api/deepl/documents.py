"""DeepL's document translation, as the `deepl` client's `translate_document*` calls it: upload
(`POST /v2/document`, multipart `file`, `target_lang`, `source_lang`, `formality`,
`glossary_id` or `glossary_ids`, `output_format`) answering `{document_id, document_key}`;
status (`POST /v2/document/{document_id}` with `document_key`, JSON or form) answering
`{document_id, status, seconds_remaining?, billed_characters?, error_message?}`; the result
(`POST /v2/document/{document_id}/result` with `document_key`): the file, or 503 while it is
not ready (the client's DocumentNotReadyException). The key is checked on each as on the other
DeepL routes. A document comes back in its own format: another `output_format` is 400."""

from __future__ import annotations

from typing import Any, Literal

from fastapi import APIRouter, Request, Response
from pydantic import BaseModel

from dragoman.api.deepl.protocol import from_deepl, target_codes, to_deepl
from dragoman.api.deepl.router import CallerDep
from dragoman.api.deepl.serving import glossary_terms
from dragoman.api.params import body_schema, read_params
from dragoman.api.uploads import (
    DEEPL_ERROR,
    FILE_RESPONSE,
    JobsDep,
    errors,
    file_response,
    one_of,
    read_upload,
    upload_body,
)
from dragoman.errors import InvalidRequest
from dragoman.files import find, formats
from dragoman.jobs.runner import Ask
from dragoman.languages import NAMES
from dragoman.service.documents import TextOptions
from dragoman.service.glossary import Glossaries

router = APIRouter(prefix="/v2", tags=["deepl"])

_FORMALITY = {"", "default", "prefer_more", "prefer_less"}
_KEY = {403: "Missing or invalid key"}
_STORE = {503: "The document store (--documents-url) failing"}
_READ = {
    **_KEY,
    400: "A body nested too deep or malformed",
    404: "No document by that id and key (or expired)",
}
_UPLOAD_ERRORS = errors(
    DEEPL_ERROR,
    {
        **_KEY,
        400: "Bad parameters or language; a file type no reader handles (the message names those "
        "supported), or one that is not what it claims to be",
        404: "No glossary by that glossary_id (or not this key's)",
        413: "The file over --max-file-bytes",
        503: "Engine not ready, draining, the document store full (Retry-After) or failing",
    },
)
_SOURCES = [to_deepl(c) for c in sorted(NAMES)]
_TARGETS = sorted({t for c in NAMES for t, _ in target_codes(c)} | set(_SOURCES))
_OUTPUTS = sorted({e.lstrip(".") for f in formats() for e in (*f.extensions, f".{f.name}")})
_FIELDS: dict[str, dict[str, Any]] = {
    "target_lang": one_of(_TARGETS, "DeepL's code to translate into (any case)."),
    "source_lang": one_of(_SOURCES, "Omit to detect the document's."),
    "formality": one_of(sorted(_FORMALITY - {""})),
    "glossary_id": {"type": "string"},
    "glossary_ids": {"type": "string", "description": "Comma separated (at most 5)."},
    "output_format": one_of(_OUTPUTS, "The uploaded file's own format only."),
}


class DocumentHandle(BaseModel):
    document_id: str
    document_key: str


class DocumentKey(BaseModel):
    document_key: str


class DocumentStatus(BaseModel):
    document_id: str
    status: Literal["queued", "translating", "done", "error"]
    seconds_remaining: int | None = None
    billed_characters: int | None = None
    error_message: str | None = None


@router.post(
    "/document",
    response_model=DocumentHandle,
    responses=_UPLOAD_ERRORS,
    openapi_extra=upload_body(_FIELDS, ["target_lang"]),
)
async def upload(request: Request, caller: CallerDep, jobs: JobsDep) -> DocumentHandle:
    """Upload a document to translate in the background."""
    sent = await read_upload(request)
    fields = sent.fields
    if sent.data is None or sent.filename is None:
        raise InvalidRequest("Parameter 'file' not specified.")
    if not fields.get("target_lang"):
        raise InvalidRequest("Parameter 'target_lang' not specified.")
    target = from_deepl(fields["target_lang"], "target_lang")
    given = fields.get("source_lang")
    source = from_deepl(given, "source_lang") if given else None
    if fields.get("formality", "").lower() not in _FORMALITY:
        raise InvalidRequest(
            f"formality '{fields['formality']}' is not supported for this target language; "
            "use prefer_more or prefer_less (accepted, no effect)"
        )
    wanted = fields.get("output_format", "").strip().lower().lstrip(".")
    fmt = find(sent.filename)  # UnsupportedFormat (400 here) naming the supported ones
    if wanted and wanted != fmt.name and f".{wanted}" not in fmt.extensions:
        raise InvalidRequest(
            f"output_format '{wanted}' is not supported: a {fmt.name} document is translated "
            f"into a {fmt.name} document"
        )
    ids = [fields[n] for n in ("glossary_id",) if fields.get(n)]
    ids += [i.strip() for i in fields.get("glossary_ids", "").split(",") if i.strip()]
    glossaries: Glossaries = request.app.state.glossaries
    terms = await glossary_terms(glossaries, list(dict.fromkeys(ids)), source, target, caller)
    ask = Ask(source, target, TextOptions(glossary=terms))
    record, key = await jobs.submit(sent.filename, sent.data, ask, caller)
    return DocumentHandle(document_id=record.id, document_key=key)


async def _key(request: Request) -> str | None:
    value = (await read_params(request)).get("document_key")
    return value if isinstance(value, str) and value else None


@router.post(
    "/document/{document_id}",
    response_model=DocumentStatus,
    response_model_exclude_none=True,
    responses=errors(DEEPL_ERROR, {**_READ, **_STORE}),
    openapi_extra=body_schema(DocumentKey),
)
async def status(
    document_id: str, request: Request, caller: CallerDep, jobs: JobsDep
) -> DocumentStatus:
    """The document's status: queued, translating (with an estimate of the seconds left),
    done (with the characters billed) or error (with why)."""
    record = await jobs.get(document_id, await _key(request), caller)
    return DocumentStatus(
        document_id=record.id,
        status=record.status,
        seconds_remaining=record.seconds_remaining(),
        billed_characters=record.billed_characters if record.status == "done" else None,
        error_message=record.error,
    )


@router.post(
    "/document/{document_id}/result",
    response_class=Response,
    responses={
        200: FILE_RESPONSE,
        **errors(
            DEEPL_ERROR,
            {**_READ, 503: "Not translated yet, or failed (the status says which); the store"},
        ),
    },
    openapi_extra=body_schema(DocumentKey),
)
async def result(document_id: str, request: Request, caller: CallerDep, jobs: JobsDep) -> Response:
    """The translated document, in the uploaded document's format."""
    record, data = await jobs.result(document_id, await _key(request), caller)
    return file_response(record, data)
