"""No request's text work holds the event loop: a real echo server, given crafted texts at
the character limit (a long run of zeros after a `%`, of spaces after a `<`) beside plain
prose, answers /health at once all the while, and the request itself comes back whole."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from dragoman.bench.hostile import SIZE, families, plain
from dragoman.bench.servers import Launched, launch_echo

HEALTH_LIMIT_S = 1.0  # a quadratic pattern held it for minutes; a free loop answers in ms
DEADLINE_S = 120.0


@pytest.fixture(scope="module")
def echo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Launched]:
    logs: Path = tmp_path_factory.mktemp("logs")
    server = launch_echo(logs, "en,fr", "--echo-delay", "0", "--cache-mib", "0")
    try:
        yield server
    finally:
        server.stop()


async def _health_while(url: str, body: dict[str, object]) -> tuple[int, list[float]]:
    waits: list[float] = []
    async with httpx.AsyncClient(base_url=url, timeout=DEADLINE_S) as c:
        request = asyncio.create_task(c.post("/v1/translate", json=body))
        deadline = time.monotonic() + DEADLINE_S
        while not request.done():
            assert time.monotonic() < deadline, "the request did not finish in time"
            started = time.perf_counter()
            r = await c.get("/health")
            waits.append(time.perf_counter() - started)
            assert r.status_code == 200
        answer = await request
        assert answer.status_code == 200, answer.text[:300]
        assert len(answer.json()["translations"]) == len(body["text"])  # type: ignore[arg-type]
        return answer.status_code, waits


@pytest.mark.parametrize("family", ["printf zeros", "marker spaces", "note spaces"])
def test_health_answers_while_a_crafted_text_is_worked(echo: Launched, family: str) -> None:
    texts = [families(SIZE)[family], plain(SIZE)]
    body = {"text": texts, "source_lang": "en", "target_lang": "fr"}
    _, waits = asyncio.run(_health_while(echo.url, body))
    assert waits, "the request finished before /health was asked once"
    assert max(waits) < HEALTH_LIMIT_S, f"/health waited {max(waits):.2f} s"
