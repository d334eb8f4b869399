"""LibreTranslate's file translation: `POST /translate_file` (multipart `file`, `source` (auto
detects), `target`, `api_key`) translates the file before it answers, as LibreTranslate does,
within the request's deadline (a client that leaves, or a deadline that passes, stops the job
and its engine work), and answers `{"translatedFileUrl": ".../download_file/<name>"}`;
`GET /download_file/<name>` returns the file. The name holds the job's handle (its id and key):
the URL is all it takes to download it, with or without API keys, until the job expires."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any
from urllib.parse import quote

from fastapi import APIRouter, Request, Response
from pydantic import BaseModel

from dragoman.api._disconnect import cancel_on_disconnect
from dragoman.api.deps import DeadlineDep, KeysDep
from dragoman.api.libretranslate.protocol import from_lt, to_lt
from dragoman.api.libretranslate.serving import caller_of
from dragoman.api.uploads import (
    FILE_RESPONSE,
    LT_ERROR,
    JobsDep,
    errors,
    file_response,
    one_of,
    read_upload,
    upload_body,
)
from dragoman.errors import (
    DeadlineExceeded,
    DragomanError,
    InvalidRequest,
    UnsupportedLanguage,
)
from dragoman.jobs.record import JobRecord, split_handle
from dragoman.jobs.runner import Ask
from dragoman.jobs.service import Jobs
from dragoman.languages import NAMES
from dragoman.service.deadline import Deadline
from dragoman.service.keys import ANONYMOUS

router = APIRouter(tags=["libretranslate"])

# LibreTranslate's spellings, its legacy aliases too (read in any case).
_CODES = [to_lt(c) for c in sorted(NAMES)] + ["zh", "pb", "pt-BR"]
_FIELDS: dict[str, dict[str, Any]] = {
    "source": one_of(["auto", *_CODES], "Language code, or auto (the default)."),
    "target": one_of(_CODES, "Language code."),
    "api_key": {"type": "string"},
}
_ERRORS = errors(
    LT_ERROR,
    {
        400: "Bad parameters or language, a missing API key, a file type no reader handles (the "
        "message names those supported) or a file that is not what it claims to be",
        403: "Invalid API key",
        413: "The file over --max-file-bytes",
        429: "Slowdown: the key's limits",
        500: "The file could not be translated (the message says why)",
        503: "Engine not ready, draining, the document store full (Retry-After) or failing",
        504: "Not translated within the request's deadline (the job is stopped)",
    },
)


class LtFileResponse(BaseModel):
    translatedFileUrl: str


async def _translated(jobs: Jobs, record: JobRecord, deadline: Deadline) -> JobRecord:
    try:
        async with asyncio.timeout(deadline.remaining()):
            return await jobs.outcome(record.id)
    except TimeoutError:
        raise DeadlineExceeded(
            f"the file was not translated within the request's deadline of {deadline.seconds:g} s"
        ) from None


@router.post(
    "/translate_file",
    response_model=LtFileResponse,
    responses=_ERRORS,
    openapi_extra=upload_body(_FIELDS, ["target"]),
)
async def translate_file(
    request: Request, jobs: JobsDep, keys: KeysDep, deadline: DeadlineDep
) -> LtFileResponse:
    """Translate a file; the answer's URL downloads the translation."""
    sent = await read_upload(request)
    fields = sent.fields
    caller = caller_of(keys, fields.get("api_key"))
    if sent.data is None or sent.filename is None:
        raise InvalidRequest("Invalid request: missing file parameter")
    if not fields.get("target"):
        raise InvalidRequest("Invalid request: missing target parameter")
    source, target = from_lt(fields.get("source") or "auto"), from_lt(fields["target"])
    if target is None:
        raise UnsupportedLanguage("auto is not supported as a target language")
    record, key = await jobs.submit(sent.filename, sent.data, Ask(source, target), caller)
    try:
        await cancel_on_disconnect(request, _translated(jobs, record, deadline))
    except BaseException:
        # Its client gone, its deadline passed, or it failed: nothing will fetch it.
        with contextlib.suppress(DragomanError):
            await asyncio.shield(jobs.delete(record.id, key, caller))
        raise
    name = f"{record.id}{key}.{quote(record.filename)}"
    return LtFileResponse(translatedFileUrl=f"{request.base_url}download_file/{name}")


@router.get(
    "/download_file/{name}",
    response_class=Response,
    responses={200: FILE_RESPONSE, **errors(LT_ERROR, {404: "No such file (or expired)"})},
)
async def download_file(name: str, jobs: JobsDep) -> Response:
    """A file translated by /translate_file, by the name its URL gave."""
    job_id, key = split_handle(name.partition(".")[0])
    record, data = await jobs.result(job_id, key, ANONYMOUS)
    return file_response(record, data)
