"""A real Redis-protocol server for the shared stores' tests (the cache's, the glossaries'):
one a test module, its database emptied before each test."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest
from redis.asyncio import Redis

from dragoman.bench.store import Store
from tests.stores import running_store


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Store]:
    yield from running_store(tmp_path_factory)


@pytest.fixture
async def raw(store: Store) -> AsyncIterator[Redis]:
    client = Redis.from_url(store.url)
    await client.flushdb()
    yield client
    await client.aclose()
