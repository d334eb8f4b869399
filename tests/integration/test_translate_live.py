"""Real translations through a real server and the real engine."""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Awaitable, Callable

import httpx
import pytest

from dragoman.bench.servers import Launched
from tests.integration.conftest import Pace

pytestmark = pytest.mark.integration

CJK = re.compile(r"[\u4e00-\u9fff]")


def body(text: object, target: str = "fr", source: str = "en") -> dict[str, object]:
    return {"text": text, "source_lang": source, "target_lang": target}


async def test_en_fr_thank_you_contains_merci(client: httpx.AsyncClient) -> None:
    # A sentence no other test sends: a repeat would come from the cache, with no engine work.
    r = await client.post("/v1/translate", json=body("Thank you very much for all your help."))
    assert r.status_code == 200, r.text
    item = r.json()["translations"][0]
    assert "Merci" in item["text"]
    assert item["finish_reason"] == "stop"
    assert item["output_tokens"] > 0
    assert r.json()["usage"]["input_tokens"] == item["input_tokens"]
    assert item["inference_seconds"] > 0  # from the engine's own request metrics


async def test_en_zh_contains_chinese_characters(client: httpx.AsyncClient) -> None:
    r = await client.post("/v1/translate", json=body("Good morning, my friend.", "zh"))
    assert r.status_code == 200, r.text
    assert CJK.search(r.json()["translations"][0]["text"])


async def test_en_de_translation(client: httpx.AsyncClient) -> None:
    r = await client.post("/v1/translate", json=body("Thank you very much for your help.", "de"))
    assert "Dank" in r.json()["translations"][0]["text"]


async def test_32_concurrent_requests_all_answered_correctly(client: httpx.AsyncClient) -> None:
    numbers = [3 + 7 * i for i in range(32)]
    texts = [f"The museum has {n} paintings." for n in numbers]
    replies = await asyncio.gather(*(client.post("/v1/translate", json=body(t)) for t in texts))
    assert [r.status_code for r in replies] == [200] * 32
    for n, reply in zip(numbers, replies, strict=True):
        out = reply.json()["translations"][0]["text"]
        assert str(n) in out, (n, out)
        assert "musée" in out.lower(), out


async def test_list_request_keeps_order(client: httpx.AsyncClient) -> None:
    texts = [f"The room number is {n}." for n in (101, 202, 303, 404, 505)]
    r = await client.post("/v1/translate", json=body(texts))
    assert r.status_code == 200, r.text
    outs = [t["text"] for t in r.json()["translations"]]
    assert len(outs) == 5
    for n, out in zip((101, 202, 303, 404, 505), outs, strict=True):
        assert str(n) in out, outs
    assert r.json()["usage"]["output_tokens"] == sum(
        t["output_tokens"] for t in r.json()["translations"]
    )


@pytest.mark.parametrize(
    ("payload", "status", "code"),
    [
        (body("Hello", "xx"), 400, "unsupported_language"),
        (body("Hello", "fr", "klingon"), 400, "unsupported_language"),
        (body(""), 422, "empty_text"),
        (body(["fine", "  "]), 422, "empty_text"),
        (body("x" * 100_001), 413, "text_too_long"),  # over --max-text-chars
        (body(["a"] * 9), 413, "too_many_items"),
        ({"text": "Hello"}, 422, "invalid_request"),
    ],
)
async def test_bad_input_is_a_clear_4xx(
    client: httpx.AsyncClient, payload: dict[str, object], status: int, code: str
) -> None:
    r = await client.post("/v1/translate", json=payload)
    assert r.status_code == status, r.text
    assert r.json()["error"]["code"] == code
    assert r.json()["error"]["message"]


def test_engine_not_ready_was_503_while_loading(live_server: Launched) -> None:
    assert live_server.during_load, "the engine loaded before any request could be made"
    (_, ready_status, _ready_body), (_, tr_status, tr_body) = live_server.during_load
    assert ready_status == 503
    assert tr_status == 503
    assert tr_body == {
        "error": {
            "code": "engine_not_ready",
            "message": "the model is still loading; retry shortly",
        }
    }


async def test_languages_and_health(client: httpx.AsyncClient) -> None:
    langs = (await client.get("/v1/languages")).json()
    codes = {lang["code"] for lang in langs["languages"]}
    assert {"en", "fr", "de", "zh", "ko", "ja"} <= codes
    assert (await client.get("/health")).json()["engine"] == "ready"


def _gauge(metrics: str, name: str) -> float:
    for line in metrics.splitlines():
        if line.startswith(name + "{"):
            return float(line.rsplit(" ", 1)[1])
    raise AssertionError(f"{name} not in /metrics")


async def test_metrics_show_engine_gauges(client: httpx.AsyncClient) -> None:
    await client.post("/v1/translate", json=body("Hello"))
    text = (await client.get("/metrics")).text
    for name in (
        "vllm:num_requests_running",
        "vllm:num_requests_waiting",
        "vllm:kv_cache_usage_perc",
        "vllm:request_queue_time_seconds_bucket",
        "vllm:inter_token_latency_seconds_bucket",
        "vllm:request_time_per_output_token_seconds_bucket",
        "dragoman_http_requests_total",
        "dragoman_http_request_duration_seconds_bucket",
    ):
        assert name in text, name


async def _wait_for(check: Callable[[], Awaitable[bool]], seconds: float) -> bool:
    """Poll `check` until it holds or `seconds` pass (a deadline, not a sleep)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if await check():
            return True
        await asyncio.sleep(0.1)
    return await check()


async def test_client_disconnect_aborts_engine_requests(live_server: Launched, pace: Pace) -> None:
    # Three texts of twelve different sentences (identical ones would share one engine request).
    texts = [
        " ".join(
            f"The quick brown fox number {i} jumps over the lazy dog near river bank {j}."
            for i in range(12)
        )
        for j in range(3)
    ]
    async with httpx.AsyncClient(base_url=live_server.url, timeout=120) as watcher:

        async def running() -> float:
            return _gauge((await watcher.get("/metrics")).text, "vllm:num_requests_running")

        async def all_three() -> bool:
            # Each text is cut into sentences (pieces), each its own engine request.
            return await running() >= 3

        async def none() -> bool:
            return await running() == 0

        assert await _wait_for(none, pace.deadline(100))
        async with httpx.AsyncClient(base_url=live_server.url, timeout=None) as doomed:
            call = asyncio.create_task(doomed.post("/v1/translate", json=body(texts, "de")))
            # Prefill of the first sentences, then a step: a few dozen token-times anywhere.
            assert await _wait_for(all_three, pace.deadline(200)), "never saw 3+ running"
            assert not call.done()  # 36 sentences, 8 at a time (--max-items 8): far from finished
            call.cancel()  # the client goes away mid-translation
            await asyncio.gather(call, return_exceptions=True)
        # Finishing all 36 would take many steps; the abort takes a step or two.
        assert await _wait_for(none, pace.deadline(60, floor=10)), "engine requests not aborted"
        metrics = (await watcher.get("/metrics")).text
        assert 'route="/v1/translate",status="499"' in metrics
