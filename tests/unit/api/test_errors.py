"""The one error mapping: a message that quotes what the client sent always renders."""

from __future__ import annotations

import json
import logging

import httpx
import pytest
from fastapi import FastAPI

from dragoman.api.errors import shaped, surface_of
from dragoman.logs import RequestIdFilter
from tests.fakes import FakeTranslator


def test_a_message_quoting_a_lone_surrogate_renders_in_each_shape() -> None:
    """A code sent in a query string or form can reach a message ("xx is not supported"); a
    lone surrogate in it made the error response itself fail (500)."""
    for path, key in (("/translate", "error"), ("/v2/translate", "message")):
        r = shaped(path, 400, "unsupported_language", "\ud800 is not supported")
        assert r.status_code == 400
        assert json.loads(r.body)[key] == "? is not supported"
    r = shaped("/v1/translate", 400, "unsupported_language", "é is fine")
    assert json.loads(r.body)["error"]["message"] == "é is fine"


def test_openai_paths_it_does_not_serve_answer_in_openai_shape() -> None:
    for path in ("/v1/chat", "/v1/chat/completions", "/v1/embeddings", "/v1/models/x"):
        assert surface_of(path) == "openai", path
    for path in ("/v1/translate", "/v1/languages", "/v1/info", "/health"):
        assert surface_of(path) == "native", path


async def test_an_unhandled_error_names_its_request_in_the_log_and_the_answer(
    app: FastAPI, fake: FakeTranslator, caplog: pytest.LogCaptureFixture
) -> None:
    """The handler of unexpected errors runs outside the edge, after its request id is gone
    from the context: the id is read from the request's state."""

    async def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("a bug")

    fake.translate = broken  # type: ignore[method-assign]
    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
    async with httpx.AsyncClient(transport=transport, base_url="http://test") as c:
        body = {"text": "Hello there", "source_lang": "en", "target_lang": "fr"}
        with caplog.at_level(logging.ERROR, logger="dragoman.api.errors"):
            r = await c.post("/v1/translate", json=body, headers={"X-Request-Id": "req-42"})
    assert r.status_code == 500 and r.json()["error"]["code"] == "internal_error"
    assert r.headers["x-request-id"] == "req-42"
    [record] = [rec for rec in caplog.records if "unhandled error" in rec.getMessage()]
    RequestIdFilter().filter(record)  # what the server's handlers apply: the id stays
    assert record.request_id == "req-42"  # type: ignore[attr-defined]
    assert "RuntimeError: a bug" in caplog.text


@pytest.mark.parametrize("path", ["/v1/translate", "/v1/chat/completions"])
async def test_a_json_body_not_in_utf8_is_invalid_request(
    client: httpx.AsyncClient, path: str
) -> None:
    """FastAPI's own refusal of a body it cannot decode was code `http_error`, in no table."""
    body = b'{"text": "caf\xe9", "source_lang": "en", "target_lang": "fr", "messages": []}'
    r = await client.post(path, content=body, headers={"content-type": "application/json"})
    assert r.status_code == 400, r.text
    assert r.json()["error"]["code"] == "invalid_request", r.text
