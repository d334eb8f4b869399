"""The OpenAI-compatible surface on the fake engine: shapes, stream framing, errors, keys and
aborts (the real `openai` client on the real engine is tests/integration/test_openai_live.py)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dragoman.engine.protocol import ChatParams
from dragoman.service.keys import add_key
from tests.fakes import FakeTranslator
from tests.unit.api.conftest import wait_for

URL = "/v1/chat/completions"


def chat(text: Any = "Hello there friend", **extra: Any) -> dict[str, Any]:
    return {"model": "fake", "messages": [{"role": "user", "content": text}], **extra}


def events(body: str) -> list[Any]:
    """The `data:` payloads of an event stream, in order; `[DONE]` as the string."""
    assert body.endswith("\n\n"), body
    out: list[Any] = []
    for block in body.split("\n\n")[:-1]:
        assert block.startswith("data: "), block
        data = block.removeprefix("data: ")
        out.append(data if data == "[DONE]" else json.loads(data))
    return out


def openai_error(r: httpx.Response, status: int, code: str, kind: str) -> str:
    assert r.status_code == status, r.text
    body = r.json()
    assert set(body) == {"error"}
    assert body["error"]["code"] == code
    assert body["error"]["type"] == kind
    assert body["error"]["param"] is None
    message: str = body["error"]["message"]
    return message


# -- /v1/models -------------------------------------------------------------------------------


async def test_models_lists_the_served_model(client: httpx.AsyncClient) -> None:
    r = await client.get("/v1/models")
    assert r.status_code == 200
    data = r.json()
    assert data["object"] == "list"
    [model] = data["data"]
    assert model["id"] == "fake"
    assert model["object"] == "model"
    assert model["owned_by"] == "dragoman"
    assert model["root"] == "/models/fake"  # vllm bench serve reads it
    assert isinstance(model["created"], int)


async def test_model_retrieve_known_and_unknown(client: httpx.AsyncClient) -> None:
    assert (await client.get("/v1/models/fake")).json()["id"] == "fake"
    r = await client.get("/v1/models/gpt-4o")
    openai_error(r, 404, "model_not_found", "not_found_error")


async def test_openapi_documents_400_in_openai_shape_not_422(client: httpx.AsyncClient) -> None:
    """The surface answers bad input 400 in OpenAI's shape; the schema said 422 Validation
    Error."""
    spec = (await client.get("/openapi.json")).json()
    for path, method in (("/v1/chat/completions", "post"), ("/v1/models/{model}", "get")):
        responses = spec["paths"][path][method]["responses"]
        assert "422" not in responses, path
        shape = responses["400"]["content"]["application/json"]["schema"]
        assert shape == {"$ref": "#/components/schemas/ErrorResponse"}, path
    error = spec["components"]["schemas"]["ErrorDetail"]
    assert set(error["properties"]) == {"message", "type", "param", "code"}


# -- non-streamed -----------------------------------------------------------------------------


async def test_chat_answers_with_completion_and_usage(client: httpx.AsyncClient) -> None:
    r = await client.post(URL, json=chat())
    assert r.status_code == 200, r.text
    data = r.json()
    assert data["id"].startswith("chatcmpl-")
    assert data["object"] == "chat.completion"
    assert data["model"] == "fake"
    assert isinstance(data["created"], int)
    assert data["choices"] == [
        {
            "index": 0,
            "message": {"role": "assistant", "content": "Hello there friend"},
            "finish_reason": "stop",
            "logprobs": None,
        }
    ]
    assert data["usage"] == {"prompt_tokens": 3, "completion_tokens": 3, "total_tokens": 6}


async def test_chat_content_parts_are_joined_with_newlines(
    client: httpx.AsyncClient, fake: FakeTranslator
) -> None:
    parts = [{"type": "text", "text": "one two"}, {"type": "text", "text": "three"}]
    r = await client.post(URL, json=chat(parts))
    assert r.status_code == 200, r.text
    assert r.json()["choices"][0]["message"]["content"] == "one two three"
    assert r.json()["usage"]["prompt_tokens"] == 3


async def test_max_completion_tokens_wins_and_ends_with_length(
    client: httpx.AsyncClient, fake: FakeTranslator
) -> None:
    r = await client.post(URL, json=chat(max_tokens=1, max_completion_tokens=2))
    data = r.json()
    assert data["choices"][0]["message"]["content"] == "Hello there"
    assert data["choices"][0]["finish_reason"] == "length"
    assert data["usage"]["completion_tokens"] == 2
    r = await client.post(URL, json=chat(max_tokens=1))
    assert r.json()["choices"][0]["message"]["content"] == "Hello"


async def test_sampling_fields_and_vllm_extras_reach_the_engine(
    client: httpx.AsyncClient, fake: FakeTranslator
) -> None:
    extra = {
        "temperature": 0.0,
        "top_p": 0.9,
        "top_k": 5,
        "min_p": 0.1,
        "repetition_penalty": 1.1,
        "presence_penalty": 0.5,
        "frequency_penalty": -0.5,
        "ignore_eos": True,
        "stop": "END",
        "seed": 7,
        "user": "someone",  # ignored, as every unknown field
        "tool_choice": "none",
        "best_of_something": 3,
    }
    r = await client.post(URL, json=chat(**extra))
    assert r.status_code == 200, r.text
    assert fake.chat_params == ChatParams(
        max_tokens=None,
        cap=512,  # --max-output-tokens
        temperature=0.0,
        top_p=0.9,
        top_k=5,
        min_p=0.1,
        repetition_penalty=1.1,
        presence_penalty=0.5,
        frequency_penalty=-0.5,
        ignore_eos=True,
        stop=("END",),
        seed=7,
    )


async def test_null_optional_fields_take_their_defaults(
    client: httpx.AsyncClient, fake: FakeTranslator
) -> None:
    """The openai SDK's types allow None for every optional parameter and vLLM's server takes
    it as the default: `n` and `stream` were refused 400."""
    nulls = {
        "n": None,
        "stream": None,
        "stream_options": None,
        "ignore_eos": None,
        "temperature": None,
        "max_tokens": None,
        "stop": None,
        "seed": None,
        "logprobs": None,
        "tools": None,
        "response_format": None,
    }
    r = await client.post(URL, json=chat(**nulls))
    assert r.status_code == 200, r.text
    assert r.json()["object"] == "chat.completion"  # stream null: not streamed
    assert fake.chat_params == ChatParams(cap=512)  # --max-output-tokens
    r = await client.post(URL, json=chat(stream=True, stream_options={"include_usage": None}))
    assert r.status_code == 200, r.text
    assert "usage" not in events(r.text)[-2]  # include_usage null: its default, no usage chunk
    r = await client.post(URL, json={"model": "fake", "messages": None})
    assert openai_error(r, 400, "invalid_request", "invalid_request_error").startswith(
        "messages: Input should be a valid list"
    )


async def test_model_may_be_omitted(client: httpx.AsyncClient) -> None:
    body = chat()
    del body["model"]
    r = await client.post(URL, json=body)
    assert r.status_code == 200
    assert r.json()["model"] == "fake"


# -- streamed ---------------------------------------------------------------------------------


async def test_stream_frames_role_content_finish_usage_and_done(client: httpx.AsyncClient) -> None:
    r = await client.post(URL, json=chat(stream=True, stream_options={"include_usage": True}))
    assert r.status_code == 200
    assert r.headers["content-type"].startswith("text/event-stream")
    got = events(r.text)
    assert got[-1] == "[DONE]"
    chunks = got[:-1]
    assert {c["object"] for c in chunks} == {"chat.completion.chunk"}
    assert len({c["id"] for c in chunks}) == 1
    assert chunks[0]["id"].startswith("chatcmpl-")
    assert {c["model"] for c in chunks} == {"fake"}
    deltas = [c["choices"][0]["delta"] for c in chunks[:-1]]
    assert deltas == [
        {"role": "assistant", "content": ""},
        {"content": "Hello"},
        {"content": " there"},
        {"content": " friend"},
        {},
    ]
    assert [c["choices"][0]["finish_reason"] for c in chunks[:-1]] == [None] * 4 + ["stop"]
    assert all("usage" not in c for c in chunks[:-1])
    assert chunks[-1]["choices"] == []
    assert chunks[-1]["usage"] == {"prompt_tokens": 3, "completion_tokens": 3, "total_tokens": 6}


async def test_stream_without_include_usage_has_no_usage_chunk(client: httpx.AsyncClient) -> None:
    r = await client.post(URL, json=chat(stream=True, max_completion_tokens=1))
    got = events(r.text)
    assert got[-1] == "[DONE]"
    assert [c["choices"][0]["finish_reason"] for c in got[:-1]] == [None, None, "length"]
    assert all(c["choices"] for c in got[:-1])


async def test_stream_failing_mid_answer_sends_an_error_event_then_done(
    client: httpx.AsyncClient, fake: FakeTranslator, app: FastAPI
) -> None:
    fake.chat_fail_after = 1
    r = await client.post(URL, json=chat(stream=True, stream_options={"include_usage": True}))
    assert r.status_code == 200
    got = events(r.text)
    assert got[1]["choices"][0]["delta"] == {"content": "Hello"}
    assert got[-2] == {
        "error": {
            "message": "the fake engine failed mid-answer",
            "type": "server_error",
            "param": None,
            "code": "engine_error",
        }
    }
    assert got[-1] == "[DONE]"
    assert app.state.admission.in_flight == 0


async def test_stream_deadline_passing_is_an_error_event(
    client: httpx.AsyncClient, fake: FakeTranslator, app: FastAPI
) -> None:
    fake.delay = 0.5
    r = await client.post(URL, json=chat(stream=True), headers={"X-Request-Timeout": "0.2"})
    got = events(r.text)
    assert got[-2]["error"]["code"] == "deadline_exceeded"
    assert got[-1] == "[DONE]"
    assert fake.cancelled == 1
    assert app.state.admission.in_flight == 0


async def test_deadline_passing_without_stream_is_504(
    client: httpx.AsyncClient, fake: FakeTranslator
) -> None:
    fake.delay = 0.5
    r = await client.post(URL, json=chat(), headers={"X-Request-Timeout": "0.2"})
    openai_error(r, 504, "deadline_exceeded", "server_error")
    assert fake.cancelled == 1


# -- errors: OpenAI's shape, a 4xx, never a 500 ----------------------------------------------


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        ({"model": "fake"}, "messages: Field required"),
        (chat(n=2), "n: only n=1 (one choice) is supported"),
        (chat(logprobs=True), "logprobs: log probabilities are not supported"),
        (chat(tools=[{"type": "function"}]), "tools: tools (function calling) are not supported"),
        (
            chat(response_format={"type": "json_object"}),
            "response_format: only the text response format is supported, not 'json_object'",
        ),
        (
            chat([{"type": "image_url", "image_url": {"url": "x"}}]),
            "messages.0.content: only text content parts are supported, not 'image_url'",
        ),
        (chat(stop=["ok", ""]), "stop: stop sequences must not be empty"),
    ],
)
async def test_bad_requests_are_400_in_openai_shape(
    client: httpx.AsyncClient, payload: dict[str, Any], message: str
) -> None:
    r = await client.post(URL, json=payload)
    assert openai_error(r, 400, "invalid_request", "invalid_request_error") == message


@pytest.mark.parametrize(
    "payload",
    [
        {"model": "fake", "messages": []},
        {"model": "fake", "messages": [{"role": "tool", "content": "x"}]},
        {"model": "fake", "messages": [{"role": "user"}]},
        {"model": "fake", "messages": "hello"},
        chat(max_tokens=0),
        chat(temperature=-1),
        chat(stream="sometimes"),
        # a seed past int64 failed vLLM's engine step (torch's manual_seed overflows)
        chat(seed=2**64),
        chat(seed=-(2**63) - 1),
    ],
)
async def test_malformed_fields_are_400(client: httpx.AsyncClient, payload: Any) -> None:
    openai_error(
        await client.post(URL, json=payload), 400, "invalid_request", "invalid_request_error"
    )


@pytest.mark.parametrize("field", ["repetition_penalty", "temperature", "top_p", "min_p"])
@pytest.mark.parametrize("value", [b"Infinity", b"NaN", b"-Infinity"])
async def test_infinity_and_nan_are_no_sampling_setting(
    client: httpx.AsyncClient, field: str, value: bytes
) -> None:
    """Python's JSON reads them; llama-server would have been sent a literal that is no JSON."""
    body = b'{"messages": [{"role": "user", "content": "hi"}], "%s": %s}' % (field.encode(), value)
    r = await client.post(URL, content=body, headers={"content-type": "application/json"})
    openai_error(r, 400, "invalid_request", "invalid_request_error")


async def test_bad_json_is_400(client: httpx.AsyncClient) -> None:
    r = await client.post(
        URL, content=b'{"messages": [', headers={"content-type": "application/json"}
    )
    openai_error(r, 400, "invalid_request", "invalid_request_error")


async def test_unknown_model_is_404_model_not_found(client: httpx.AsyncClient) -> None:
    for stream in (False, True):
        r = await client.post(URL, json={**chat(stream=stream), "model": "gpt-4o"})
        message = openai_error(r, 404, "model_not_found", "not_found_error")
        assert message == (
            "the model 'gpt-4o' does not exist on this server; it serves 'fake' (GET /v1/models)"
        )


async def test_messages_too_long_are_400_before_any_stream(
    client: httpx.AsyncClient, fake: FakeTranslator
) -> None:
    fake.max_words = 2
    for stream in (False, True):
        r = await client.post(URL, json=chat(stream=stream))
        openai_error(r, 400, "context_length_exceeded", "invalid_request_error")
    assert fake.started == 0


async def test_wrong_method_is_405_in_openai_shape(client: httpx.AsyncClient) -> None:
    openai_error(await client.get(URL), 405, "method_not_allowed", "invalid_request_error")


async def test_overloaded_server_is_429_rate_limit_error(
    client: httpx.AsyncClient, app: FastAPI
) -> None:
    admission = app.state.admission
    ticket = admission.admit(admission.limit)  # the server is full
    try:
        r = await client.post(URL, json=chat())
        openai_error(r, 429, "overloaded", "rate_limit_error")
        assert int(r.headers["retry-after"]) >= 1
    finally:
        ticket.release()


async def test_draining_server_is_503(client: httpx.AsyncClient, app: FastAPI) -> None:
    app.state.admission.drain()
    openai_error(await client.post(URL, json=chat()), 503, "draining", "server_error")


async def test_dead_engine_is_503(client: httpx.AsyncClient, fake: FakeTranslator) -> None:
    fake.dead = True
    openai_error(await client.post(URL, json=chat()), 503, "engine_dead", "server_error")


scalars = (
    st.none()
    | st.booleans()
    | st.integers(-(2**40), 2**40)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=30)
)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=12,
)
messages = st.lists(
    st.fixed_dictionaries(
        {},
        optional={
            "role": st.sampled_from(["user", "system", "assistant", "developer", "tool"]) | values,
            "content": st.text(max_size=40)
            | st.lists(st.fixed_dictionaries({"type": st.just("text"), "text": st.text()}))
            | values,
        },
    ),
    max_size=3,
)
chat_bodies = st.fixed_dictionaries(
    {},
    optional={
        "model": st.just("fake") | values,
        "messages": messages | values,
        "stream": st.booleans() | values,
        "stream_options": st.just({"include_usage": True}) | values,
        "max_tokens": st.integers(-2, 5) | values,
        "max_completion_tokens": st.integers(-2, 5) | values,
        "n": st.integers(0, 2) | values,
        "stop": st.text(max_size=3) | values,
        "temperature": st.floats(-1, 3) | values,
        "top_k": st.integers(-3, 3) | values,
        "ignore_eos": values,
    },
)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(body=chat_bodies | values)
async def test_any_json_body_gets_an_answer_below_500_in_openai_shape(
    client: httpx.AsyncClient, body: Any
) -> None:
    r = await client.post(
        URL, content=json.dumps(body), headers={"content-type": "application/json"}
    )
    if r.status_code == 200:
        if r.headers["content-type"].startswith("text/event-stream"):
            got = events(r.text)
            assert got[-1] == "[DONE]"
            assert not any("error" in e for e in got[:-1] if isinstance(e, dict)), r.text
        else:
            assert r.json()["object"] == "chat.completion"
        return
    assert r.status_code < 500, r.text
    error = r.json()["error"]
    assert set(error) == {"message", "type", "param", "code"}
    assert error["message"] and error["code"]


# -- keys -------------------------------------------------------------------------------------


async def test_keys_on_need_a_valid_bearer_key(serve, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    key = add_key(tmp_path / "keys", "alice")
    async with serve(api_keys_file=tmp_path / "keys") as (app, c):
        for path, send in (("/v1/models", c.get), (URL, c.post)):
            kwargs: dict[str, Any] = {"json": chat()} if path == URL else {}
            r = await send(path, **kwargs)
            message = openai_error(r, 401, "missing_api_key", "authentication_error")
            assert message == "an API key is required: send Authorization: Bearer <key>"
            r = await send(path, headers={"Authorization": f"Bearer {key}x"}, **kwargs)
            assert openai_error(r, 401, "invalid_api_key", "authentication_error") == (
                "the API key is not valid"
            )
            r = await send(path, headers={"Authorization": f"Bearer {key}"}, **kwargs)
            assert r.status_code == 200, r.text
        characters = app.state.metrics.key_characters.labels("alice")._value.get()
        assert characters == len("Hello there friend") + 4 * 3  # and 4 a token of the answer


async def test_key_character_limit_counts_message_characters(serve, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    key = add_key(tmp_path / "keys", "bob")
    auth = {"Authorization": f"Bearer {key}"}
    async with serve(api_keys_file=tmp_path / "keys", key_chars_per_minute=30) as (_app, c):
        assert (await c.post(URL, json=chat(), headers=auth)).status_code == 200  # 18 chars
        r = await c.post(URL, json=chat(), headers=auth)
        openai_error(r, 429, "rate_limited", "rate_limit_error")


async def used_today(c: httpx.AsyncClient, key: str) -> int:
    """The key's characters today, as DeepL's /v2/usage reports them (the same key)."""
    r = await c.get("/v2/usage", headers={"Authorization": f"DeepL-Auth-Key {key}"})
    assert r.status_code == 200, r.text
    count: int = r.json()["character_count"]
    return count


async def test_the_answer_is_charged_not_only_the_messages(
    serve, fake: FakeTranslator, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    """A one-character prompt bought a whole context of answer for one character: each token
    of the answer costs 4 characters, streamed or not."""
    key = add_key(tmp_path / "keys", "carol")
    auth = {"Authorization": f"Bearer {key}"}
    fake.chat_reply = " ".join(["word"] * 10)
    async with serve(api_keys_file=tmp_path / "keys", key_chars_per_day=1000) as (app, c):
        r = await c.post(URL, json=chat("Hi"), headers=auth)
        assert r.json()["usage"]["completion_tokens"] == 10
        assert await used_today(c, key) == 2 + 4 * 10
        r = await c.post(URL, json=chat("Hi", stream=True, max_tokens=3), headers=auth)
        assert events(r.text)[-1] == "[DONE]"
        assert await used_today(c, key) == 42 + (2 + 4 * 3)  # 3 tokens of the 10
        characters = app.state.metrics.key_characters.labels("carol")._value.get()
        assert characters == 42 + 14


async def test_the_answer_is_capped_by_what_the_key_has_left(
    serve, fake: FakeTranslator, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    """max_tokens (given or not: the rest of the context) and ignore_eos bought as many tokens
    as the context held: the answer stops where the key's quota does, then the key is refused
    as on every surface."""
    key = add_key(tmp_path / "keys", "dave")
    auth = {"Authorization": f"Bearer {key}"}
    fake.chat_reply = " ".join(["word"] * 200)
    async with serve(api_keys_file=tmp_path / "keys", key_chars_per_day=100) as (_app, c):
        r = await c.post(URL, json=chat("Hi", max_tokens=150, ignore_eos=True), headers=auth)
        assert r.status_code == 200, r.text
        assert fake.chat_params is not None and fake.chat_params.cap == (100 - 2) // 4
        assert r.json()["usage"]["completion_tokens"] == 24
        assert r.json()["choices"][0]["finish_reason"] == "length"
        assert await used_today(c, key) == 2 + 4 * 24
        r = await c.post(URL, json=chat("Hi"), headers=auth)  # 2 left: not one token more
        message = openai_error(r, 429, "quota_exceeded", "rate_limit_error")
        assert "4 for each token of its answer" in message
        assert int(r.headers["retry-after"]) >= 1
        assert await used_today(c, key) == 98


async def test_the_answer_is_capped_by_the_servers_output_limit(
    serve, fake: FakeTranslator
) -> None:  # type: ignore[no-untyped-def]
    """With no key, max_tokens unset reached the rest of the context: --max-output-tokens
    bounds it, as it bounds a translation."""
    fake.chat_reply = " ".join(["word"] * 100)
    async with serve(max_output_tokens=16) as (_app, c):
        for extra in ({}, {"max_tokens": 1000}, {"ignore_eos": True}):
            r = await c.post(URL, json=chat(**extra))
            assert r.json()["usage"]["completion_tokens"] == 16, extra
            assert r.json()["choices"][0]["finish_reason"] == "length"
        r = await c.post(URL, json=chat(max_tokens=5))
        assert r.json()["usage"]["completion_tokens"] == 5


async def test_concurrent_answers_cannot_spend_the_quota_twice(
    serve, fake: FakeTranslator, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    """Each admitted answer holds the most it may cost until it ends: two at once each
    capped to the whole rest of the quota would have spent it twice."""
    key = add_key(tmp_path / "keys", "erin")
    auth = {"Authorization": f"Bearer {key}"}
    fake.chat_reply = " ".join(["word"] * 100)
    fake.delay = 0.01
    async with serve(api_keys_file=tmp_path / "keys", key_chars_per_day=100) as (_app, c):
        first = asyncio.create_task(c.post(URL, json=chat("Hi", stream=True), headers=auth))
        await wait_for(lambda: fake.running == 1)
        second = await c.post(URL, json=chat("Hi"), headers=auth)
        openai_error(second, 429, "quota_exceeded", "rate_limit_error")
        assert (await first).status_code == 200
        assert await used_today(c, key) == 98


async def test_a_request_that_ends_early_is_charged_what_was_made(
    serve, fake: FakeTranslator, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    """The reservation is lowered to the tokens generated when the answer ends, however."""
    key = add_key(tmp_path / "keys", "frank")
    auth = {"Authorization": f"Bearer {key}"}
    fake.chat_reply = " ".join(["word"] * 50)
    fake.chat_fail_after = 5
    async with serve(api_keys_file=tmp_path / "keys", key_chars_per_day=1000) as (_app, c):
        r = await c.post(URL, json=chat("Hi"), headers=auth)
        assert r.status_code == 500
        assert await used_today(c, key) == 2 + 4 * 5


# -- the client leaves ------------------------------------------------------------------------


def _scope(body: bytes) -> tuple[dict[str, Any], Any, asyncio.Event]:
    disconnect = asyncio.Event()
    sent = False

    async def receive() -> dict[str, object]:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        await disconnect.wait()
        return {"type": "http.disconnect"}

    scope = {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.4"},  # Starlette's own listener is off
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": URL,
        "raw_path": URL.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": [(b"content-type", b"application/json")],
        "client": ("127.0.0.1", 1234),
        "server": ("127.0.0.1", 80),
        "state": {},
    }
    return scope, receive, disconnect


@pytest.mark.parametrize("stream", [False, True])
async def test_client_disconnect_aborts_the_engine_request(
    app: FastAPI, fake: FakeTranslator, stream: bool
) -> None:
    fake.delay = 0.05
    fake.chat_reply = " ".join(["word"] * 1000)  # 50 s if not aborted
    scope, receive, disconnect = _scope(json.dumps(chat(stream=stream)).encode())
    sent: list[dict[str, Any]] = []

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    call = asyncio.create_task(app(scope, receive, send))
    if stream:  # words are on their way to the client
        await wait_for(lambda: any(b"word" in m.get("body", b"") for m in sent))
    else:
        await wait_for(lambda: fake.running == 1)
    disconnect.set()
    await asyncio.wait_for(call, timeout=5)
    assert fake.cancelled == 1
    assert fake.running == 0
    assert app.state.admission.in_flight == 0
    assert app.state.metrics.aborted._value.get() == 1
