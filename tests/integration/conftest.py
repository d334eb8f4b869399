"""The integration tier: a real `dragoman serve` process with the real vLLM engine on the real
default model, on 127.0.0.1. One server per session; its start-up is observed on the way.

`dragoman serve` picks its engine by host (`--architecture host`: llama.cpp on CPUs without
native bf16), so the servers these tests start are pinned to vLLM on every host; the llama.cpp
tests ask for theirs by name (a flag beats this environment variable)."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass

import httpx
import pytest

from dragoman.bench.servers import Launched, launch_dragoman

os.environ.setdefault("DRAGOMAN_ARCHITECTURE", "continuous")


def quickest_engine() -> tuple[str, ...]:
    """`dragoman serve` flags for the engine that starts quickest here: llama.cpp (~15 s on 2
    cores against vLLM's ~50) where its server is present (the `cpu` extra's wheel), else the
    tier's vLLM. For tests of the layers above the engine (the shared cache), which start
    servers of their own."""
    from dragoman.engine.llamacpp import server_launcher
    from dragoman.errors import DragomanError
    from dragoman.settings import EngineSettings

    try:
        server_launcher(EngineSettings())
    except DragomanError:
        return ()
    return ("--architecture", "llama-cpp")


@pytest.fixture(scope="session")
def live_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Launched]:
    server = launch_dragoman(
        tmp_path_factory.mktemp("server"),
        "--max-items",
        "8",
        timeout=300,
        probe_while_loading=True,
    )
    yield server
    server.stop()


@dataclass(frozen=True)
class Pace:
    """This host's engine speed, measured once: tests derive their deadlines from it rather
    than from a fixed number that holds on one CPU and fails on a slower one."""

    seconds_per_token: float

    def deadline(self, tokens: int, floor: float = 30.0) -> float:
        """Seconds to allow for work worth `tokens` decode steps of one stream, with room
        (a factor 4) for a busy machine."""
        return floor + 4 * tokens * self.seconds_per_token


@pytest.fixture(scope="session")
def pace(live_server: Launched) -> Pace:
    body = {"text": "The weather is lovely today.", "source_lang": "en", "target_lang": "fr"}
    r = httpx.post(f"{live_server.url}/v1/translate", json=body, timeout=600)
    r.raise_for_status()
    item = r.json()["translations"][0]
    return Pace(item["inference_seconds"] / max(1, item["output_tokens"]))


@pytest.fixture
async def client(live_server: Launched, pace: Pace) -> AsyncIterator[httpx.AsyncClient]:
    limits = httpx.Limits(max_connections=64)
    timeout = pace.deadline(2000, floor=120)  # the longest test work: dozens of texts at once
    async with httpx.AsyncClient(base_url=live_server.url, timeout=timeout, limits=limits) as c:
        yield c
