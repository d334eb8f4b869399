"""The shared cache store on a real engine: a server translates a sentence with --cache-url,
stops; a fresh server (its in-process cache empty) given the same store answers the same
request with the same translation and no engine work. One engine at a time: the first server
stops before the second starts (two vLLM engines of 8-9 GB each beside the session's server
outgrew the machine's 24 GiB once). The store sits above the engine: both servers run on the
engine that starts quickest here (llama.cpp where present: two vLLM starts made this the
suite's slowest test)."""

from __future__ import annotations

import time
from collections.abc import Iterator

import httpx
import pytest
from redis import Redis

from dragoman.bench.servers import launch_dragoman
from dragoman.bench.store import Store
from tests.integration.conftest import quickest_engine
from tests.stores import running_store

pytestmark = pytest.mark.integration

SENTENCE = "The shared cache keeps every translation for the other servers."
FLAGS = ("--max-num-seqs", "2", "--log-level", "info", *quickest_engine())
# Tokens through the engine, on every architecture: a cache hit adds none.
ENGINE = 'dragoman_translation_tokens_total{direction="input"}'


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Store]:
    yield from running_store(tmp_path_factory)


def sample(metrics: str, name: str) -> float:
    """The sum of a metric's samples (`name` includes any labels)."""
    return sum(
        float(line.rsplit(" ", 1)[1])
        for line in metrics.splitlines()
        if line.startswith(name) and not line.startswith("#")
    )


def translate(url: str) -> tuple[dict[str, object], str, str]:
    """The translation, and /metrics before and after it."""
    body = {"text": SENTENCE, "source_lang": "en", "target_lang": "fr"}
    with httpx.Client(base_url=url, timeout=300) as c:
        before = c.get("/metrics").text
        r = c.post("/v1/translate", json=body)
        assert r.status_code == 200, r.text
        return r.json()["translations"][0], before, c.get("/metrics").text


def test_a_fresh_server_answers_from_the_store_without_the_engine(
    store: Store, tmp_path_factory: pytest.TempPathFactory
) -> None:
    first = launch_dragoman(
        tmp_path_factory.mktemp("first"), "--cache-url", store.url, *FLAGS, timeout=300
    )
    try:
        item, before, after = translate(first.url)
        assert item["finish_reason"] == "stop" and item["output_tokens"]
        assert sample(after, ENGINE) > sample(before, ENGINE)  # the engine's work
        assert sample(after, 'dragoman_cache_misses_total{level="shared"}') >= 1
        with Redis.from_url(store.url) as raw:
            deadline = time.monotonic() + 30
            while not raw.keys("dragoman:t:*"):  # written in the background
                assert time.monotonic() < deadline, "the translation never reached the store"
                time.sleep(0.05)
    finally:
        first.stop()

    second = launch_dragoman(
        tmp_path_factory.mktemp("second"), "--cache-url", store.url, *FLAGS, timeout=300
    )
    try:
        again, before, after = translate(second.url)
    finally:
        second.stop()
    assert again["text"] == item["text"]
    # A hit reports the usage the miss did: the answer does not tell a caller that another
    # one translated the same text (the engine's own counter shows that no work was done).
    assert again["finish_reason"] == "stop"
    assert (again["input_tokens"], again["output_tokens"]) == (
        item["input_tokens"],
        item["output_tokens"],
    )
    assert sample(after, ENGINE) == sample(before, ENGINE)  # no engine work
    assert sample(after, 'dragoman_cache_hits_total{level="shared"}') == 1
    assert sample(after, "dragoman_cache_store_errors_total") == 0
    assert "cache store" not in second.log.read_text()  # no outage logged
