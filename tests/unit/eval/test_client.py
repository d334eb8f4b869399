from __future__ import annotations

import json

import httpx
import pytest

from dragoman.errors import ConfigError, Unreachable
from dragoman.eval import client as c
from dragoman.eval.sets import EvalItem

ITEMS = [
    EvalItem(f"en-fr/ui/{i:03d}", "en", "fr", "ui", f"text {i}", f"texte {i}", "test")
    for i in range(5)
]


def native(request: httpx.Request) -> httpx.Response:
    if request.url.path == "/v1/info":
        return httpx.Response(200, json={"engines": {"qwen": {}}})
    body = json.loads(request.content)
    text = body["text"]
    if text == "text 3":
        return httpx.Response(500, json={"error": {"code": "engine_error", "message": "boom"}})
    reason = "repetition" if text == "text 2" else "stop"
    return httpx.Response(
        200,
        json={
            "translations": [{"text": f"T({text})", "finish_reason": reason, "output_tokens": 3}]
        },
    )


async def test_native_outputs_in_item_order_and_failures_recorded() -> None:
    target = c.Target("http://x", "native", transport=httpx.MockTransport(native))
    outputs, server = await c.translate_all(target, ITEMS, concurrency=2)
    assert [o.text for o in outputs] == ["T(text 0)", "T(text 1)", "T(text 2)", "", "T(text 4)"]
    assert outputs[2].finish_reason == "repetition"
    assert outputs[3].error is not None and outputs[3].error.startswith("HTTP 500")
    assert server == {"path": "/v1/info", "body": {"engines": {"qwen": {}}}}


async def test_openai_sends_the_plain_prompt_greedy_to_the_listed_model() -> None:
    seen: list[dict[str, object]] = []

    def openai(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/v1/models":
            return httpx.Response(200, json={"data": [{"id": "served-name"}]})
        assert request.headers["authorization"] == "Bearer k"
        seen.append(json.loads(request.content))
        return httpx.Response(
            200,
            json={
                "choices": [{"message": {"content": "Bonjour"}, "finish_reason": "stop"}],
                "usage": {"completion_tokens": 2},
            },
        )

    target = c.Target(
        "http://x/", "openai", api_key="k", max_tokens=99, transport=httpx.MockTransport(openai)
    )
    outputs, _ = await c.translate_all(target, ITEMS[:1])
    assert outputs[0] == c.Output("Bonjour", "stop", outputs[0].seconds, 2, None)
    assert seen == [
        {
            "model": "served-name",
            "messages": [
                {
                    "role": "user",
                    "content": "Translate the following text from English into French. "
                    "Output only the translation.\n\ntext 0",
                }
            ],
            "temperature": 0,
            "max_tokens": 99,
        }
    ]


async def test_overloaded_answers_are_retried(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = {"n": 0}

    async def no_sleep(_: float) -> None:
        return None

    def busy_then_ok(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/v1/info":
            return httpx.Response(404)
        calls["n"] += 1
        if calls["n"] < 3:
            return httpx.Response(429, headers={"retry-after": "2"}, json={})
        return native(request)

    monkeypatch.setattr(c.asyncio, "sleep", no_sleep)
    target = c.Target("http://x", transport=httpx.MockTransport(busy_then_ok))
    outputs, server = await c.translate_all(target, ITEMS[:1])
    assert outputs[0].text == "T(text 0)"
    assert calls["n"] == 3
    assert server["body"] == {}


async def test_an_unreachable_server_is_a_clear_error() -> None:
    def down(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused")

    target = c.Target("http://127.0.0.1:9", transport=httpx.MockTransport(down))
    with pytest.raises(Unreachable, match=r"cannot reach http://127\.0\.0\.1:9"):
        await c.translate_all(target, ITEMS[:1])


async def test_an_error_without_text_is_named_by_its_type() -> None:
    def silent(request: httpx.Request) -> httpx.Response:
        raise httpx.ReadTimeout("")

    target = c.Target("http://127.0.0.1:9", transport=httpx.MockTransport(silent))
    with pytest.raises(Unreachable, match=r"cannot reach http://127\.0\.0\.1:9: ReadTimeout$"):
        await c.translate_all(target, ITEMS[:1])


@pytest.mark.parametrize(
    "reply",
    [
        {"translations": [{"text": None, "finish_reason": "stop", "output_tokens": 1}]},
        {"translations": [{"text": 123, "finish_reason": "stop", "output_tokens": 1}]},
        {"translations": [{"text": ["a"], "finish_reason": "stop", "output_tokens": 1}]},
        {"translations": [{"text": "x", "finish_reason": ["stop"], "output_tokens": 1}]},
        {"translations": "none"},
        ["not", "an", "object"],
    ],
)
async def test_a_malformed_reply_is_a_failed_item(reply: object) -> None:
    def odd(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/v1/info":
            return httpx.Response(200, json=["x"])  # not an object either
        if json.loads(request.content)["text"] == "text 1":
            return httpx.Response(200, json=reply)
        return native(request)

    target = c.Target("http://x", transport=httpx.MockTransport(odd))
    outputs, server = await c.translate_all(target, ITEMS[:3])
    assert [o.ok for o in outputs] == [True, False, True]
    assert outputs[1].text == "" and outputs[1].error
    assert server["body"] == ["x"]


async def test_a_chat_reply_of_another_shape_is_a_failed_item() -> None:
    def odd(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/v1/models":
            return httpx.Response(200, json={"data": ["bare-name"]})
        body = {"choices": [{"message": {"content": 5}, "finish_reason": "stop"}], "usage": []}
        return httpx.Response(200, json=body)

    target = c.Target("http://x", "openai", transport=httpx.MockTransport(odd))
    outputs, _ = await c.translate_all(target, ITEMS[:1])
    assert target.model == "bare-name"
    assert outputs[0].error == "TypeError: malformed reply: text is int, not a string"


@pytest.mark.parametrize("models", [["m1"], {"data": [{"name": "m1"}]}, "hello"])
async def test_a_model_list_without_a_name_asks_for_one(models: object) -> None:
    def odd(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json=models)

    target = c.Target("http://x", "openai", transport=httpx.MockTransport(odd))
    with pytest.raises(ConfigError, match="lists no model; give --openai-model"):
        await c.translate_all(target, ITEMS[:1])
