"""What the document routes of every surface share: the jobs service as a dependency, an
upload read off the event loop (a multipart body of up to --max-file-bytes, parsed in a thread
rather than by Starlette's parser on the loop), the OpenAPI request body that declares one, and
a translated file as a response. The body's size was bounded by the edge before any of this
(api/edge.py: the upload routes' own, larger bound)."""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Annotated, Any
from urllib.parse import quote

from fastapi import Depends, Request, Response
from python_multipart.exceptions import MultipartParseError
from python_multipart.multipart import MultipartParser, parse_options_header

from dragoman.api.params import media_type, read_params
from dragoman.errors import InvalidRequest
from dragoman.jobs.record import JobRecord
from dragoman.jobs.service import Jobs

UPLOAD_PATHS = frozenset({"/v1/documents", "/v2/document", "/translate_file"})
"""The routes whose body may carry a file (--max-file-bytes, not --max-body-bytes)."""
FORM_BYTES = 64 * 1024
"""What an upload's form may add to its file's bytes (boundaries, headers, other fields)."""
MAX_PARTS = 64
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


@dataclass(frozen=True)
class Upload:
    filename: str | None
    """The file part's name, its folders dropped; None when the body has no file."""
    data: bytes | None
    fields: dict[str, str]
    """The query's parameters, then the body's other fields (a later one wins)."""


async def get_jobs(request: Request) -> Jobs:
    jobs: Jobs = request.app.state.jobs
    return jobs


JobsDep = Annotated[Jobs, Depends(get_jobs)]


def file_name(raw: str) -> str:
    """A client's file name as a name alone: a browser may send its folders (`C:\\x\\a.docx`),
    a hostile one `../../a`; control characters dropped, at most 200 characters kept (the
    end, where the extension is)."""
    name = PurePosixPath(raw.replace("\\", "/")).name
    return _CONTROL.sub("", name)[-200:] or "document"


def parse_multipart(body: bytes, content_type: str) -> Upload:
    """The fields and the one file of a multipart body (blocking: callers run it in a
    thread). InvalidRequest for a malformed body, more than one file or `MAX_PARTS` parts."""
    _, options = parse_options_header(content_type)
    boundary = options.get(b"boundary")
    if not boundary:
        raise InvalidRequest("Invalid form body: no multipart boundary")
    parts: list[tuple[dict[bytes, bytes], list[bytes]]] = []
    header: list[bytes] = [b"", b""]

    def on_part_begin() -> None:
        if len(parts) >= MAX_PARTS:
            raise InvalidRequest(f"Invalid form body: more than {MAX_PARTS} parts")
        parts.append(({}, []))

    def on_header_field(data: bytes, start: int, end: int) -> None:
        header[0] += data[start:end]

    def on_header_value(data: bytes, start: int, end: int) -> None:
        header[1] += data[start:end]

    def on_header_end() -> None:
        parts[-1][0][header[0].lower()] = header[1]
        header[0], header[1] = b"", b""

    def on_part_data(data: bytes, start: int, end: int) -> None:
        parts[-1][1].append(data[start:end])

    parser = MultipartParser(
        boundary,
        {
            "on_part_begin": on_part_begin,
            "on_header_field": on_header_field,
            "on_header_value": on_header_value,
            "on_header_end": on_header_end,
            "on_part_data": on_part_data,
        },
    )
    try:
        parser.write(body)
        parser.finalize()
    except MultipartParseError as exc:
        raise InvalidRequest(f"Invalid form body: {exc}") from None
    fields: dict[str, str] = {}
    filename: str | None = None
    data: bytes | None = None
    for headers, chunks in parts:
        _, disposition = parse_options_header(headers.get(b"content-disposition", b""))
        name = disposition.get(b"name", b"").decode("utf-8", "replace")
        if b"filename" in disposition:
            if data is not None:
                raise InvalidRequest("Invalid form body: send one file")
            filename = file_name(disposition[b"filename"].decode("utf-8", "replace"))
            data = b"".join(chunks)
        elif name:
            value = b"".join(chunks)
            if len(value) > FORM_BYTES:
                raise InvalidRequest(f"Invalid form body: field {name!r} is too long")
            fields[name] = value.decode("utf-8", "replace")
    return Upload(filename, data, fields)


async def read_upload(request: Request) -> Upload:
    """The request's file and fields: a multipart body's, else (JSON or a urlencoded form, no
    file) its parameters."""
    query = {k: v for k, v in request.query_params.items()}
    if media_type(request) != "multipart/form-data":
        params = await read_params(request)
        return Upload(None, None, {k: v for k, v in params.items() if isinstance(v, str)})
    body = await request.body()
    upload = await asyncio.to_thread(parse_multipart, body, request.headers["content-type"])
    return Upload(upload.filename, upload.data, {**query, **upload.fields})


def upload_body(fields: dict[str, dict[str, Any]], required: list[str]) -> dict[str, Any]:
    """OpenAPI requestBody of an upload: multipart, a binary `file` and these fields. (No rule
    across fields, such as the source and the target differing: the schema fuzzer cannot
    check one on a body holding a file's bytes.)"""
    properties = {"file": {"type": "string", "format": "binary"}, **fields}
    schema = {"type": "object", "properties": properties, "required": ["file", *required]}
    return {
        "requestBody": {
            "required": True,
            "content": {"multipart/form-data": {"schema": schema}},
        }
    }


def one_of(values: list[str], description: str = "") -> dict[str, Any]:
    """A string field taking these values (as documented: the handler may read more
    spellings, another case)."""
    field: dict[str, Any] = {"type": "string", "enum": list(dict.fromkeys(values))}
    return {**field, "description": description} if description else field


# Each surface's error shape (api/errors.py renders them), and what the edge answers any
# request before routing (api/edge.py) or any handler on an unexpected error.
NATIVE_ERROR = {
    "type": "object",
    "properties": {
        "error": {
            "type": "object",
            "properties": {"code": {"type": "string"}, "message": {"type": "string"}},
            "required": ["code", "message"],
        }
    },
    "required": ["error"],
}
DEEPL_ERROR = {
    "type": "object",
    "properties": {"message": {"type": "string"}},
    "required": ["message"],
}
LT_ERROR = {"type": "object", "properties": {"error": {"type": "string"}}, "required": ["error"]}
_EDGE = {
    408: "The request body did not arrive within --body-timeout",
    413: "The body over its bound (an upload's: --max-file-bytes)",
    431: "Request head over --max-header-bytes",
    500: "An unexpected error (logged with the request id)",
}


def errors(shape: dict[str, Any], statuses: dict[int, str]) -> dict[int | str, Any]:
    """`responses=` of a document route: `statuses` and the edge's, in the surface's shape."""
    table = {**_EDGE, **statuses}
    return {
        status: {
            "description": table[status],
            "content": {"application/json": {"schema": shape}},
        }
        for status in sorted(table)
    }


FILE_RESPONSE: dict[str, Any] = {
    "description": "The translated file, in the uploaded file's format",
    "content": {"application/octet-stream": {"schema": {"type": "string", "format": "binary"}}},
}


def file_response(record: JobRecord, data: bytes) -> Response:
    """The translated file as an attachment, under the uploaded file's name."""
    ascii_name = record.filename.encode("ascii", "replace").decode().replace('"', "'")
    disposition = (
        f"attachment; filename=\"{ascii_name}\"; filename*=UTF-8''{quote(record.filename)}"
    )
    return Response(
        data, media_type=record.media_type, headers={"Content-Disposition": disposition}
    )
