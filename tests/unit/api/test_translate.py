from __future__ import annotations

import asyncio

import httpx
import pytest

from tests.fakes import FakeTranslator


def body(text: object, source: str = "en", target: str = "fr") -> dict[str, object]:
    return {"text": text, "source_lang": source, "target_lang": target}


async def test_translate_single_text_returns_translation_usage_and_timing(
    client: httpx.AsyncClient,
) -> None:
    r = await client.post("/v1/translate", json=body("Hello world"))
    assert r.status_code == 200
    data = r.json()
    assert data["translations"] == [
        {
            "text": "[fr] Hello world",
            "finish_reason": "stop",
            "input_tokens": 12,
            "output_tokens": 2,
            "queue_seconds": 0.001,
            "inference_seconds": 0.01,
            "model": "fake",
        }
    ]
    assert data["model"] == "fake"
    assert data["usage"] == {"input_tokens": 12, "output_tokens": 2}
    assert data["timing"]["queue_seconds"] == 0.001
    assert data["timing"]["total_seconds"] >= 0


async def test_translate_list_keeps_input_order_and_runs_items_concurrently(
    client: httpx.AsyncClient, fake: FakeTranslator
) -> None:
    fake.delay = 0.2
    texts = ["one", "two two", "three three three", "four"]
    r = await client.post("/v1/translate", json=body(texts))
    assert r.status_code == 200
    assert [t["text"] for t in r.json()["translations"]] == [f"[fr] {t}" for t in texts]
    # All four in the engine at once, not one after another (counted, not timed: a stalled
    # host must not fail it).
    assert fake.peak == len(texts)


async def test_translate_normalises_language_codes(client: httpx.AsyncClient) -> None:
    r = await client.post("/v1/translate", json=body("Hi", " EN ", "De"))
    assert r.status_code == 200
    assert r.json()["target_lang"] == "de"


@pytest.mark.parametrize(
    ("payload", "status", "code", "message"),
    [
        (
            body("Hi", "en", "xx"),
            400,
            "unsupported_language",
            "target_lang: unknown language code 'xx' (ISO 639-1)",
        ),
        (
            body("Hi", "english", "fr"),
            400,
            "unsupported_language",
            "source_lang: unknown language code 'english' (ISO 639-1)",
        ),
        (
            body("Hi", "en", "ko"),
            400,
            "unsupported_language",
            "target_lang: 'ko' (Korean) is not served by this model",
        ),
        (
            body("Hi", "fr", "fr"),
            400,
            "unsupported_language",
            "source_lang and target_lang are both 'fr'",
        ),
        (body(""), 422, "empty_text", "text: text must not be empty"),
        (body("   "), 422, "empty_text", "text: text must not be empty"),
        (body([]), 422, "empty_text", "text: text must not be an empty list"),
        (body(["ok", ""]), 422, "empty_text", "text: text[1] must not be empty"),
        (body("x" * 201), 413, "text_too_long", "text is 201 characters; the limit is 200"),
        (
            body(["a", "b", "c", "d", "e"]),
            413,
            "too_many_items",
            "5 texts in one request; the limit is 4",
        ),
        (
            {"text": "Hi", "source_lang": "en"},
            422,
            "invalid_request",
            "target_lang: Field required",
        ),
        (body(42), 422, "invalid_request", None),
    ],
)
async def test_translate_bad_input_gets_one_json_error_shape(
    client: httpx.AsyncClient, payload: object, status: int, code: str, message: str | None
) -> None:
    r = await client.post("/v1/translate", json=payload)
    assert r.status_code == status
    error = r.json()["error"]
    assert error["code"] == code
    if message is not None:
        assert error["message"] == message


async def test_translate_malformed_json_is_422(client: httpx.AsyncClient) -> None:
    r = await client.post(
        "/v1/translate", content=b"{not json", headers={"content-type": "application/json"}
    )
    assert r.status_code == 422
    assert r.json()["error"]["code"] == "invalid_request"


async def test_translate_text_too_long_for_model_is_413(
    client: httpx.AsyncClient, fake: FakeTranslator
) -> None:
    fake.max_words = 3
    r = await client.post("/v1/translate", json=body(["short", "one two three four"]))
    assert r.status_code == 413
    assert r.json()["error"] == {
        "code": "text_too_long",
        "message": "text is too long for the fake model",
    }


async def test_translate_dead_engine_is_503_and_health_fails(
    client: httpx.AsyncClient, fake: FakeTranslator
) -> None:
    fake.dead = True
    r = await client.post("/v1/translate", json=body("Hi"))
    assert r.status_code == 503
    assert r.json()["error"]["code"] == "engine_dead"
    health = await client.get("/health")
    assert health.status_code == 503
    assert health.json()["error"]["code"] == "engine_dead"


async def test_unknown_route_is_json_404(client: httpx.AsyncClient) -> None:
    r = await client.get("/v1/nope")
    assert r.status_code == 404
    assert r.json()["error"]["code"] == "not_found"


async def test_languages_lists_codes_and_names(client: httpx.AsyncClient) -> None:
    r = await client.get("/v1/languages")
    assert r.status_code == 200
    assert r.json() == {
        "model": "fake",
        "languages": [
            {"code": "en", "name": "English"},
            {"code": "fr", "name": "French"},
            {"code": "de", "name": "German"},
            {"code": "zh", "name": "Chinese"},
        ],
    }


async def test_translate_client_disconnect_cancels_engine_work(app, fake: FakeTranslator) -> None:  # type: ignore[no-untyped-def]
    """Drive the ASGI app by hand so the client can vanish mid-request."""
    fake.delay = 5.0
    payload = b'{"text": ["a", "b", "c"], "source_lang": "en", "target_lang": "fr"}'
    disconnect = asyncio.Event()
    sent_body = False
    messages: list[dict[str, object]] = []

    async def receive() -> dict[str, object]:
        nonlocal sent_body
        if not sent_body:
            sent_body = True
            return {"type": "http.request", "body": payload, "more_body": False}
        await disconnect.wait()
        return {"type": "http.disconnect"}

    async def send(message: dict[str, object]) -> None:
        messages.append(message)

    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/v1/translate",
        "raw_path": b"/v1/translate",
        "query_string": b"",
        "root_path": "",
        "headers": [(b"content-type", b"application/json")],
        "client": ("127.0.0.1", 1234),
        "server": ("127.0.0.1", 80),
        "state": {},
    }
    call = asyncio.create_task(app(scope, receive, send))
    for _ in range(200):
        if fake.running == 3:
            break
        await asyncio.sleep(0.01)
    assert fake.running == 3
    disconnect.set()
    await asyncio.wait_for(call, timeout=2)
    assert fake.cancelled == 3
    assert fake.running == 0
