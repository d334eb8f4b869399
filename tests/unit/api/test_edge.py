"""The edge: request ids, and the input limits that hold before parsing."""

from __future__ import annotations

import asyncio
import json
import logging
import re
from collections.abc import AsyncIterator

import pytest

from dragoman.api.edge import json_depth
from dragoman.logs import RequestIdFilter

BODY = {"text": "secret words", "source_lang": "en", "target_lang": "fr"}
JSON = {"content-type": "application/json"}


async def test_request_id_is_made_when_absent_and_echoed_when_given(serve) -> None:  # type: ignore[no-untyped-def]
    async with serve() as (_app, c):
        r = await c.post("/v1/translate", json=BODY)
        assert re.fullmatch(r"[0-9a-f]{32}", r.headers["x-request-id"])
        r = await c.post("/v1/translate", json=BODY, headers={"X-Request-Id": "abc-123"})
        assert r.headers["x-request-id"] == "abc-123"
        # An id that could forge log lines is replaced, not echoed.
        r = await c.get("/health", headers={"X-Request-Id": "a b\tc"})
        assert re.fullmatch(r"[0-9a-f]{32}", r.headers["x-request-id"])
        r = await c.get("/nope", headers={"X-Request-Id": "x" * 129})
        assert r.status_code == 404 and len(r.headers["x-request-id"]) == 32


async def test_logs_carry_the_request_id_and_never_the_text(
    serve, caplog: pytest.LogCaptureFixture
) -> None:  # type: ignore[no-untyped-def]
    caplog.handler.addFilter(RequestIdFilter())
    with caplog.at_level(logging.INFO, logger="dragoman"):
        async with serve() as (_app, c):
            await c.post("/v1/translate", json=BODY, headers={"X-Request-Id": "req-42"})
            await c.post("/v1/translate", json={**BODY, "target_lang": "xx"})
    access = [r for r in caplog.records if r.name == "dragoman.access"]
    assert access[0].getMessage().startswith("POST /v1/translate 200 ")
    assert access[0].request_id == "req-42"  # type: ignore[attr-defined]
    assert access[1].getMessage().startswith("POST /v1/translate 400 ")
    assert "secret" not in caplog.text


async def test_body_over_the_limit_by_content_length_is_413(serve) -> None:  # type: ignore[no-untyped-def]
    async with serve(max_body_bytes=1024) as (_app, c):
        r = await c.post(
            "/v1/translate", content=b"x" * 1025, headers={"content-type": "application/json"}
        )
        assert r.status_code == 413
        assert r.json() == {
            "error": {
                "code": "body_too_large",
                "message": "the request body is 1025 bytes; the limit is 1024",
            }
        }
        assert "x-request-id" in r.headers
        metrics = (await c.get("/metrics")).text
    assert 'dragoman_rejected_total{reason="body_too_large"} 1.0' in metrics
    assert 'dragoman_http_requests_total{method="POST",route="other",status="413"} 1.0' in metrics


async def test_streamed_body_over_the_limit_is_413_without_reading_it_all(serve) -> None:  # type: ignore[no-untyped-def]
    sent = 0

    async def chunks() -> AsyncIterator[bytes]:
        nonlocal sent
        for _ in range(100):
            sent += 1
            yield b"y" * 512

    async with serve(max_body_bytes=1024) as (_app, c):
        r = await c.post("/v1/translate", content=chunks())
    assert r.status_code == 413
    assert r.json()["error"] == {
        "code": "body_too_large",
        "message": "the request body is at least 1536 bytes; the limit is 1024",
    }
    assert sent < 10


async def test_slow_body_times_out_with_408(serve) -> None:  # type: ignore[no-untyped-def]
    async def drip() -> AsyncIterator[bytes]:
        yield b'{"text": '
        await asyncio.sleep(30)
        yield b'"late"}'

    async with serve(body_timeout=0.2) as (_app, c):
        r = await c.post("/v1/translate", content=drip())
    assert r.status_code == 408
    assert r.json()["error"] == {
        "code": "body_timeout",
        "message": "the request body did not arrive within 0.2 s",
    }


async def test_request_head_over_the_limit_is_431(serve) -> None:  # type: ignore[no-untyped-def]
    async with serve(max_header_bytes=1024) as (_app, c):
        r = await c.post("/v1/translate", json=BODY, headers={"X-Big": "a" * 2000})
    assert r.status_code == 431
    assert r.json()["error"]["code"] == "headers_too_large"
    assert re.fullmatch(
        r"the request head is \d+ bytes; the limit is 1024", r.json()["error"]["message"]
    )


async def test_json_nested_too_deep_is_400_before_parsing(serve) -> None:  # type: ignore[no-untyped-def]
    async with serve(max_json_depth=4) as (_app, c):
        r = await c.post("/v1/translate", json={**BODY, "text": [[[["deep"]]]]})
        assert r.status_code == 400
        assert r.json()["error"] == {
            "code": "json_too_deep",
            "message": "JSON nested 5 deep; the limit is 4",
        }
        # Brackets inside strings are text, not nesting.
        r = await c.post("/v1/translate", json={**BODY, "text": '[[[[[[{{{{ \\" ]]'})
        assert r.status_code == 200
        # A hostile depth costs a linear scan, not the parser's recursion.
        r = await c.post(
            "/v1/translate",
            content=b"[" * 100_000 + b"]" * 100_000,
            headers={"content-type": "application/json"},
        )
        assert r.status_code == 400
        assert r.json()["error"]["message"] == "JSON nested 100000 deep; the limit is 4"


SURFACES = [
    ("/v1/translate", {"text": "hi \\ud800", "source_lang": "en", "target_lang": "fr"}, 422),
    ("/translate", {"q": "hi", "source": "\\udc00", "target": "fr"}, 400),
    ("/detect", {"q": "hi \\ud800"}, 400),
    ("/v2/translate", {"text": ["hi"], "target_lang": "FR", "formality": "\\ud800"}, 400),
    ("/v2/glossaries", {"name": "x\\ud800", "source_lang": "EN", "target_lang": "FR"}, 400),
    ("/v1/chat/completions", {"messages": [{"role": "user", "content": "hi \\ud800"}]}, 400),
]


def _raw(doc: dict[str, object]) -> bytes:
    """JSON with the escapes as written (json.dumps would escape the backslash)."""
    return json.dumps(doc).replace("\\\\u", "\\u").encode()


@pytest.mark.parametrize(("path", "doc", "status"), SURFACES)
async def test_a_lone_surrogate_is_refused_in_the_surfaces_shape(
    serve, path: str, doc: dict[str, object], status: int
) -> None:  # type: ignore[no-untyped-def]
    """JSON can escape half a surrogate pair, which is no character: every surface refused it
    with 500 (cache keys, the detector, error messages quoting it could not encode it)."""
    async with serve() as (_app, c):
        r = await c.post(path, content=_raw(doc), headers={"content-type": "application/json"})
        assert r.status_code == status, r.text
        message = "the body holds a lone surrogate"
        if path.startswith("/v2/"):
            assert r.json()["message"].startswith(message)
        elif path in ("/translate", "/detect"):
            assert r.json()["error"].startswith(message)
        else:
            assert r.json()["error"]["message"].startswith(message)
        # A whole pair, escaped (as json.dumps writes an emoji), is a character.
        whole = {**BODY, "text": "hi \\ud83d\\ude00"}
        r = await c.post("/v1/translate", content=_raw(whole), headers=JSON)
        assert r.status_code == 200 and r.json()["translations"][0]["text"].endswith("\U0001f600")
        # An escaped backslash before "ud800" is text.
        r = await c.post("/v1/translate", json={**BODY, "text": "C:\\ud800"})
        assert r.status_code == 200


async def test_json_in_utf16_is_held_to_the_same_depth(serve) -> None:  # type: ignore[no-untyped-def]
    """json reads UTF-16 and UTF-32 too; the depth scan reads bytes as UTF-8, where a U+2200
    in UTF-16 (bytes 00 22) looked like a quote that hid all the brackets after it."""
    doc = '{"q": "\u2200", "target": "fr", "x": ' + "[" * 2000 + "]" * 2000 + "}"
    async with serve() as (_app, c):
        for path in ("/translate", "/v2/translate", "/v1/translate"):
            for encoding in ("utf-16-le", "utf-32"):
                r = await c.post(path, content=doc.encode(encoding), headers=JSON)
                assert r.status_code == 400, (path, encoding, r.text)
                assert "JSON nested 2001 deep; the limit is 32" in r.text


async def test_a_chunked_body_on_a_get_is_held_to_the_limits(serve) -> None:  # type: ignore[no-untyped-def]
    """A GET's body without a Content-Length was passed on unread and unchecked."""

    async def deep() -> AsyncIterator[bytes]:
        yield b'{"type": ' + b"[" * 2000 + b"]" * 2000 + b"}"

    async def big() -> AsyncIterator[bytes]:
        for _ in range(10):
            yield b" " * 512

    async with serve(max_body_bytes=1024) as (_app, c):
        r = await c.request("GET", "/v2/languages", content=deep(), headers=JSON)
        assert r.status_code == 413  # over 1 KiB before its depth is read
        r = await c.request("GET", "/v2/languages", content=big(), headers=JSON)
        assert r.status_code == 413
        assert r.json() == {"message": "the request body is at least 1536 bytes; the limit is 1024"}
    async with serve() as (_app, c):
        r = await c.request("GET", "/v2/languages", content=deep(), headers=JSON)
        assert r.status_code == 400
        assert r.json() == {"message": "JSON nested 2001 deep; the limit is 32"}
        r = await c.get("/v2/languages")
        assert r.status_code == 200


@pytest.mark.parametrize(
    ("doc", "depth"),
    [
        (b"{}", 1),
        (b'{"a": [1, {"b": []}]}', 4),
        (b'"[[["', 0),
        (b'{"a": "\\"[[[[\\""}', 1),
        (b"", 0),
        (b'"\\' * 10_000, 0),  # quote-backslash runs: linear, not retried from every quote
        (b'"unterminated [[[', 0),
        (b"[[" + b'"a' * 10_000, 2),
    ],
)
def test_json_depth(doc: bytes, depth: int) -> None:
    assert json_depth(doc) == depth


def test_json_depth_skips_the_scan_when_brackets_are_few() -> None:
    assert json_depth(b"[[[", enough=3) == 0  # cannot be deeper than 3: not scanned
    assert json_depth(b"[[[[", enough=3) == 4
