"""The shared cache store (--cache-url) at the HTTP layer, on a real Redis-protocol server and
the fake engine: a fresh server answers what another one translated without an engine request;
a store that is down costs nothing but a counted error."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi import FastAPI
from pydantic import ValidationError
from redis import Redis

from dragoman.bench.servers import free_port
from dragoman.bench.store import Store
from dragoman.engine.host_defaults import EnginePlan, plan_engine
from dragoman.engine.llamacpp import plan_llamacpp
from dragoman.host import Host
from dragoman.service.settings import ServeSettings
from dragoman.settings import EngineSettings
from tests.fakes import FakeTranslator
from tests.stores import running_store


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Store]:
    yield from running_store(tmp_path_factory)


def body(text: str | list[str]) -> dict[str, object]:
    return {"text": text, "source_lang": "en", "target_lang": "fr"}


def keys(url: str) -> int:
    with Redis.from_url(url) as raw:
        return len(raw.keys("dragoman:t:*"))


def clients(url: str) -> int:
    """Connections the store holds, this one included."""
    with Redis.from_url(url) as raw:
        return len(raw.client_list())


async def test_a_fresh_server_answers_from_the_shared_store(
    serve, fake: FakeTranslator, store: Store
) -> None:  # type: ignore[no-untyped-def]
    with Redis.from_url(store.url) as raw:
        raw.flushdb()
    async with serve(cache_url=store.url) as (_app, c):
        r = await c.post("/v1/translate", json=body(["Good morning.", "Good evening."]))
        assert r.status_code == 200, r.text
    assert fake.started == 2
    loop = asyncio.get_running_loop()
    end = loop.time() + 10
    while keys(store.url) < 2:  # written in the background
        assert loop.time() < end, "the translations never reached the store"
        await asyncio.sleep(0.01)
    while clients(store.url) > 1:  # the server's shutdown closed its connections
        assert loop.time() < end, "the stopped server still holds store connections"
        await asyncio.sleep(0.01)
    with Redis.from_url(store.url) as raw:
        names = raw.keys("*")
        stored = b"".join(raw.get(k) or b"" for k in names)
        assert all(raw.ttl(k) > 0 for k in names)
    assert not any(b"Good" in k for k in names)  # hashed keys: no text in them
    assert b"[fr] Good morning." in stored

    # A second server, its local cache empty: the store answers, the engine is not asked.
    async with serve(cache_url=store.url) as (_app, c):
        r = await c.post("/v1/translate", json=body("Good morning."))
        assert r.status_code == 200, r.text
        item = r.json()["translations"][0]
        assert item["text"] == "[fr] Good morning."
        assert item["finish_reason"] == "stop"
        # the usage the first server's engine reported (a hit answered 0: an oracle)
        assert (item["input_tokens"], item["output_tokens"]) == (12, 2)
        assert fake.started == 2
        r = await c.post("/v1/translate", json=body("Good morning."))  # now a local hit
        assert r.json()["translations"][0]["text"] == "[fr] Good morning."
        metrics = (await c.get("/metrics")).text
    assert 'dragoman_cache_hits_total{level="shared"} 1.0' in metrics
    assert 'dragoman_cache_hits_total{level="local"} 1.0' in metrics
    assert 'dragoman_cache_misses_total{level="local"} 1.0' in metrics
    assert 'dragoman_cache_store_errors_total{kind="get"} 0.0' in metrics
    assert fake.started == 2


def gets(url: str) -> int:
    """GET commands the store has served since its statistics were reset."""
    with Redis.from_url(url) as raw:
        return int(raw.info("commandstats").get("cmdstat_get", {}).get("calls", 0))


def emptied(url: str) -> None:
    with Redis.from_url(url) as raw:
        raw.flushdb()
        raw.config_resetstat()


def counted(app: FastAPI, name: str, **labels: str) -> float:
    return app.state.metrics.registry.get_sample_value(f"dragoman_{name}_total", labels) or 0.0


async def test_identical_units_in_one_request_ask_the_store_once(
    serve, fake: FakeTranslator, store: Store
) -> None:  # type: ignore[no-untyped-def]
    """A list (or a document) repeating a sentence: each unit asked the store before they
    merged, fifty lookups for one sentence; now one serves them all, miss or hit."""
    emptied(store.url)
    texts = ["Good afternoon."] * 50
    async with serve(cache_url=store.url, max_items=64) as (app, c):
        r = await c.post("/v1/translate", json=body(texts))
        assert r.status_code == 200, r.text
        assert gets(store.url) == 1
        assert fake.started == 1
        # Every unit missed locally; one looked up (a shared miss), the rest joined it.
        assert counted(app, "cache_misses", level="local") == 50
        assert counted(app, "cache_misses", level="shared") == 1
        assert counted(app, "coalesced") == 49
    loop = asyncio.get_running_loop()
    end = loop.time() + 10
    while keys(store.url) < 1:  # written in the background
        assert loop.time() < end, "the translation never reached the store"
        await asyncio.sleep(0.01)

    with Redis.from_url(store.url) as raw:
        raw.config_resetstat()  # GETs counted afresh, the entry kept
    async with serve(cache_url=store.url, max_items=64) as (app, c):  # its local cache empty
        r = await c.post("/v1/translate", json=body(texts))
        assert r.status_code == 200, r.text
        assert {t["text"] for t in r.json()["translations"]} == {"[fr] Good afternoon."}
        assert gets(store.url) == 1
        assert fake.started == 1  # the store answered
        assert counted(app, "cache_hits", level="shared") == 1
        assert counted(app, "cache_misses", level="shared") == 0
        assert counted(app, "coalesced") == 49


async def test_concurrent_requests_of_one_sentence_ask_the_store_once(
    serve, fake: FakeTranslator, store: Store
) -> None:  # type: ignore[no-untyped-def]
    """Twenty clients sending the same sentence while its translation is in the engine: each
    asked the store before joining it."""
    emptied(store.url)
    fake.gate = asyncio.Event()
    async with serve(cache_url=store.url) as (app, c):
        sent = [
            asyncio.ensure_future(c.post("/v1/translate", json=body("Good night, moon.")))
            for _ in range(20)
        ]
        try:
            loop = asyncio.get_running_loop()
            end = loop.time() + 10
            while counted(app, "coalesced") < 19:  # every other one joined the first
                assert loop.time() < end, "the requests never all joined the first"
                await asyncio.sleep(0.005)
        finally:
            fake.gate.set()
        replies = await asyncio.gather(*sent)
        assert all(r.status_code == 200 for r in replies)
        assert fake.started == 1
        assert gets(store.url) == 1
        assert counted(app, "cache_misses", level="local") == 20
        assert counted(app, "cache_misses", level="shared") == 1


BF16 = Host("bf16 CPU", "x86_64", ("avx2", "avx512_bf16"), 2, 2, (0, 1), 24.0, 20.0, None, None)
AVX2 = Host("avx2 CPU", "x86_64", ("avx2",), 2, 2, (0, 1), 24.0, 20.0, None, None)


def vllm_plan(host: Host, **settings: Any) -> EnginePlan:
    return plan_engine(EngineSettings(**settings), host, gpu=False)


def llamacpp_plan(**settings: Any) -> EnginePlan:
    return plan_llamacpp(EngineSettings(**settings), AVX2, "/nonexistent")


@pytest.mark.parametrize(
    ("writer", "reader", "shared"),
    [
        # `host` on both: bfloat16 on one host, float32 on the other; different replies.
        (({}, vllm_plan(BF16)), ({}, vllm_plan(AVX2)), False),
        # The same form, resolved on one host and set explicitly on another.
        (
            ({}, vllm_plan(BF16)),
            (
                {"weights": "full", "dtype": "bfloat16"},
                vllm_plan(AVX2, weights="full", dtype="bfloat16"),
            ),
            True,
        ),
        # llama.cpp: `host` is the Q8_0 form for the default model, as set explicitly.
        (
            ({}, llamacpp_plan()),
            ({"gguf_weights": "q8_0"}, llamacpp_plan(gguf_weights="q8_0")),
            True,
        ),
        (
            ({}, llamacpp_plan()),
            ({"gguf_weights": "shipped"}, llamacpp_plan(gguf_weights="shipped")),
            False,
        ),
    ],
    ids=[
        "bf16-vs-fp32-both-host",
        "host-vs-explicit-same-form",
        "gguf-host-is-q8_0",
        "gguf-shipped",
    ],
)
async def test_servers_share_entries_by_the_form_their_settings_resolve_to(
    serve,
    fake: FakeTranslator,
    store: Store,
    writer: tuple[dict[str, Any], EnginePlan],
    reader: tuple[dict[str, Any], EnginePlan],
    shared: bool,
) -> None:  # type: ignore[no-untyped-def]
    """Servers of different host classes behind `dragoman route` share one store: the key took
    `weights` and `gguf_weights` as given (`host`) and no dtype, so a float32 server answered
    with a bfloat16 one's entries, and `host` and the same form set explicitly shared none."""
    emptied(store.url)
    (settings, plan) = writer
    fake.plans = {"fake": plan}  # what /v1/info reports: the plan its engine runs
    async with serve(cache_url=store.url, **settings) as (_app, c):
        r = await c.post("/v1/translate", json=body("Good morning."))
        assert r.status_code == 200, r.text
    loop = asyncio.get_running_loop()
    end = loop.time() + 10
    while keys(store.url) < 1:  # written in the background
        assert loop.time() < end, "the translation never reached the store"
        await asyncio.sleep(0.01)
    assert fake.started == 1

    (settings, plan) = reader
    fake.plans = {"fake": plan}
    async with serve(cache_url=store.url, **settings) as (_app, c):
        r = await c.post("/v1/translate", json=body("Good morning."))
        assert r.status_code == 200, r.text
    assert fake.started == (1 if shared else 2)


async def test_a_store_that_is_down_still_translates_and_counts_the_error(
    serve, fake: FakeTranslator
) -> None:  # type: ignore[no-untyped-def]
    url = f"redis://127.0.0.1:{free_port()}/0"  # nothing listens there
    async with serve(cache_url=url) as (_app, c):
        r = await c.post("/v1/translate", json=body("Good night."))
        assert r.status_code == 200, r.text
        assert r.json()["translations"][0]["text"] == "[fr] Good night."
        r = await c.post("/v1/translate", json=body("Good night."))  # a local hit
        assert r.json()["translations"][0]["text"] == "[fr] Good night."
        metrics = (await c.get("/metrics")).text
    assert 'dragoman_cache_store_errors_total{kind="get"} 1.0' in metrics
    assert 'dragoman_cache_hits_total{level="local"} 1.0' in metrics
    # The local miss was looked up in the store: a shared miss too.
    assert 'dragoman_cache_misses_total{level="local"} 1.0' in metrics
    assert 'dragoman_cache_misses_total{level="shared"} 1.0' in metrics
    assert fake.started == 1


def test_the_cache_url_is_checked_and_has_an_environment_twin(
    tmp_path, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ValidationError, match="redis://, rediss:// or unix://"):
        ServeSettings(data_dir=tmp_path, cache_url="http://cache:6379")
    assert ServeSettings(data_dir=tmp_path).cache_url is None
    monkeypatch.setenv("DRAGOMAN_CACHE_URL", "redis://cache:6379/2")
    monkeypatch.setenv("DRAGOMAN_CACHE_TTL", "60")
    s = ServeSettings(data_dir=tmp_path)
    assert (s.cache_url, s.cache_ttl) == ("redis://cache:6379/2", 60)
    monkeypatch.setenv("DRAGOMAN_CACHE_URL", "")
    assert ServeSettings(data_dir=tmp_path).cache_url is None
