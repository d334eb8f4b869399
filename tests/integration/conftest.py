"""The integration tier: a real `dragoman serve` process with the real vLLM engine on the real
default model, on 127.0.0.1. One server per session; its start-up is observed on the way."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import httpx
import pytest

from dragoman.bench.servers import Launched, launch_dragoman


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


@pytest.fixture
async def client(live_server: Launched) -> AsyncIterator[httpx.AsyncClient]:
    limits = httpx.Limits(max_connections=64)
    async with httpx.AsyncClient(base_url=live_server.url, timeout=180, limits=limits) as c:
        yield c
