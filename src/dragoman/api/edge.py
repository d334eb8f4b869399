"""What every request passes before routing: a request id (taken from `X-Request-Id` or made
here, echoed in the response, on every log line of the request and in the access line), and
the input limits that hold before anything parses: head size, body size (Content-Length and
as the body arrives, on any method; a document upload's route has its own, larger bound),
time to receive the body, JSON nesting depth (in any of
the encodings JSON allows) and no lone surrogate in a JSON body. A refusal is a typed error
answered through the one error mapping (api/errors.py). No request text is logged."""

from __future__ import annotations

import asyncio
import json
import logging
import re
import secrets
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from itertools import accumulate

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from dragoman.errors import (
    BodyTimeout,
    BodyTooLarge,
    ClientClosed,
    DragomanError,
    FileTooLarge,
    HeadersTooLarge,
    InvalidRequest,
    JsonTooDeep,
)
from dragoman.logs import REQUEST_ID

_VALID_ID = re.compile(r"[A-Za-z0-9._:@/+=-]{1,128}")
# A JSON string, possessive (no backtracking) and with an optional end quote (an unterminated
# string runs to the end instead of failing and being retried from every later quote): linear.
_JSON_STRING = re.compile(rb'"(?:[^"\\]++|\\.)*+"?', re.DOTALL)
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")  # deleted by translate
_STEP = {0x5B: 1, 0x7B: 1, 0x5D: -1, 0x7D: -1}  # [ { ] }
# A surrogate escape without its other half (found after a `\u` is seen at all: most bodies
# have none), or a surrogate's own bytes (which json decodes too): confirmed by parsing, since
# an escaped backslash before "ud800" is text.
_LONE_SURROGATE_ESCAPE = re.compile(
    rb"\\u[dD](?:[89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F])"
    rb"|(?<!\\u[dD][89abAB][0-9a-fA-F]{2}\\u[dD])[c-fC-F][0-9a-fA-F]{2})"
)
_SURROGATE_BYTES = re.compile(rb"\xed[\xa0-\xbf]")
_SURROGATE = re.compile("[\ud800-\udfff]")

access_log = logging.getLogger("dragoman.access")


@dataclass(frozen=True)
class Limits:
    max_header_bytes: int = 16 * 1024
    max_body_bytes: int = 4 * 1024 * 1024
    body_timeout: float = 30.0
    max_json_depth: int = 32
    max_upload_bytes: int = 30 * 2**20 + 64 * 1024
    """The bound of a POST to one of `upload_paths` (a file and its form), instead of
    `max_body_bytes`."""
    upload_paths: frozenset[str] = frozenset()


Renderer = Callable[[Scope, DragomanError], Callable[[Scope, Receive, Send], Awaitable[None]]]


def json_depth(body: bytes, enough: int = 0) -> int:
    """Deepest nesting of arrays and objects, brackets inside strings not counted. Every step
    runs in C (no parser recursion, no per-byte Python loop), so a hostile body costs a scan.
    With `enough`, a body with at most that many opening brackets returns at once."""
    if enough and body.count(b"[") + body.count(b"{") <= enough:
        return 0
    brackets = _JSON_STRING.sub(b"", body).translate(None, _NOT_BRACKETS)
    return max(accumulate(map(_STEP.__getitem__, brackets)), default=0)


def _request_id(scope: Scope) -> str:
    for name, value in scope["headers"]:
        if name == b"x-request-id":
            given = value.decode("latin-1")
            if _VALID_ID.fullmatch(given):
                return given
            break
    return secrets.token_hex(16)  # 32 hex digits, as uuid4().hex, in a fifth of its time


class EdgeMiddleware:
    """Pure ASGI (not BaseHTTPMiddleware) so client disconnects still reach the handlers."""

    def __init__(
        self, app: ASGIApp, limits: Limits, render: Renderer, echo_id: bool = True
    ) -> None:
        self.app = app
        self.limits = limits
        self.render = render
        # False where a platform in front already answers with the request's id (Ray Serve's
        # RequestIdMiddleware, which also puts one on a request that came without): a
        # second copy would make the header "id, id".
        self.echo_id = echo_id

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.monotonic()
        rid = _request_id(scope)
        token = REQUEST_ID.set(rid)
        state = scope.setdefault("state", {})
        state.update(request_id=rid, started=started, echo_request_id=self.echo_id)
        status = 500

        async def send_with_id(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                if self.echo_id:
                    headers = message.get("headers", [])
                    message["headers"] = [*headers, (b"x-request-id", rid.encode())]
            await send(message)

        try:
            try:
                replay = await self._read(scope, receive)
            except DragomanError as exc:
                await self.render(scope, exc)(scope, receive, send_with_id)
                return
            await self.app(scope, replay, send_with_id)
        finally:
            method, path, seconds = scope["method"], scope["path"], time.monotonic() - started
            access_log.info(
                "%s %s %d %.3fs",
                method,
                path,
                status,
                seconds,
                # The same, as fields of a JSON line (logs.py); a text line shows the message.
                extra={
                    "method": method,
                    "path": path,
                    "status": status,
                    "seconds": round(seconds, 6),
                },
            )
            REQUEST_ID.reset(token)

    async def _read(self, scope: Scope, receive: Receive) -> Receive:
        """Check the head, then read the whole body under the size and time limits and check
        its depth; the app gets the body replayed, then the original channel (disconnects)."""
        lim = self.limits
        head = sum(len(k) + len(v) + 4 for k, v in scope["headers"]) + len(
            scope.get("raw_path") or b""
        )
        if head > lim.max_header_bytes:
            raise HeadersTooLarge(
                f"the request head is {head} bytes; the limit is {lim.max_header_bytes}"
            )
        declared = _content_length(scope)
        upload = scope["method"] == "POST" and scope["path"] in lim.upload_paths
        limit = lim.max_upload_bytes if upload else lim.max_body_bytes
        too_large = _file_too_large if upload else _body_too_large
        if declared is not None and declared > limit:
            raise too_large(declared, limit, "")
        if scope["method"] in ("GET", "HEAD", "OPTIONS") and not declared and not _chunked(scope):
            return receive
        chunks: list[bytes] = []
        size = 0
        try:
            async with asyncio.timeout(lim.body_timeout):
                while True:
                    message = await receive()
                    if message["type"] != "http.request":
                        raise ClientClosed("client disconnected while sending its request")
                    chunk = message.get("body", b"")
                    size += len(chunk)
                    if size > limit:
                        raise too_large(size, limit, "at least ")
                    chunks.append(chunk)
                    if not message.get("more_body", False):
                        break
        except TimeoutError:
            raise BodyTimeout(
                f"the request body did not arrive within {lim.body_timeout:g} s"
            ) from None
        body = b"".join(chunks)
        if body and _is_json(scope):
            check_json(body, lim.max_json_depth)
        return _replay(body, receive)


def check_json(body: bytes, max_depth: int) -> None:
    """JsonTooDeep past `max_depth`; InvalidRequest for a lone surrogate, which JSON can escape
    (`"\\ud800"`) but is no character: nothing past here could encode it. The depth is read
    from the body as UTF-8: json also takes UTF-16 and UTF-32, whose bytes the scan cannot."""
    encoding = json.detect_encoding(body)
    if encoding not in ("utf-8", "utf-8-sig"):
        try:  # as json decodes it
            body = body.decode(encoding, "surrogatepass").encode("utf-8", "surrogatepass")
        except UnicodeDecodeError:
            return  # nor can json: its parser refuses the body without recursing
    depth = json_depth(body, enough=max_depth)
    if depth > max_depth:
        raise JsonTooDeep(f"JSON nested {depth} deep; the limit is {max_depth}")
    maybe = (b"\\u" in body and _LONE_SURROGATE_ESCAPE.search(body) is not None) or (
        b"\xed" in body and _SURROGATE_BYTES.search(body) is not None
    )
    if maybe and _holds_surrogate(body):
        raise InvalidRequest(
            "the body holds a lone surrogate (a \\uD800-\\uDFFF escape without its other "
            "half): it is not Unicode text"
        )


def _holds_surrogate(body: bytes) -> bool:
    try:
        data = json.loads(body)  # depth checked: the parser's recursion is bounded
    except ValueError:
        return False  # invalid JSON: its parser says so, later
    return _any_surrogate(data)


def _any_surrogate(value: object) -> bool:
    if isinstance(value, str):
        return _SURROGATE.search(value) is not None
    if isinstance(value, dict):
        return any(_any_surrogate(k) or _any_surrogate(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_any_surrogate(v) for v in value)
    return False


def _replay(body: bytes, receive: Receive) -> Receive:
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay


def _content_length(scope: Scope) -> int | None:
    for name, value in scope["headers"]:
        if name == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None


def _chunked(scope: Scope) -> bool:
    """Whether a body comes without a Content-Length (a GET may carry one that way)."""
    return any(name == b"transfer-encoding" for name, _ in scope["headers"])


def _is_json(scope: Scope) -> bool:
    for name, value in scope["headers"]:
        if name == b"content-type":
            return b"json" in value.lower()
    return True  # no content type: FastAPI parses it as JSON anyway


def _too_large(size: int, limit: int, qualifier: str = "") -> str:
    return f"the request body is {qualifier}{size} bytes; the limit is {limit}"


def _body_too_large(size: int, limit: int, qualifier: str) -> DragomanError:
    return BodyTooLarge(_too_large(size, limit, qualifier))


def _file_too_large(size: int, limit: int, qualifier: str) -> DragomanError:
    return FileTooLarge(
        f"the upload is {qualifier}{size} bytes; a file and its form may be at most {limit} "
        "(--max-file-bytes)"
    )
