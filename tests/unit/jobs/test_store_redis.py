"""Document jobs in a Redis-protocol store (a real one on 127.0.0.1; the fake engine): a job
kept, finished (its keys given an expiry) and removed; the bounds held over two servers; a job
taken by one server answered by another; a store that is down a 503, not a hang."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from pydantic import ValidationError
from redis.asyncio import Redis

from dragoman.bench.servers import free_port
from dragoman.bench.store import Store
from dragoman.errors import JobStoreFailed, JobStoreFull
from dragoman.jobs.runner import Ask
from dragoman.jobs.service import Jobs
from dragoman.jobs.store_redis import INDEX, PREFIX, RedisStore
from dragoman.service.keys import Caller
from dragoman.service.settings import ServeSettings
from tests.fakes import FakeTranslator
from tests.stores import running_store
from tests.unit.jobs.conftest import make_service
from tests.unit.jobs.test_store import record


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Store]:
    yield from running_store(tmp_path_factory)


@pytest.fixture
async def raw(server: Store) -> AsyncIterator[Redis]:
    client = Redis.from_url(server.url)
    await client.flushdb()
    yield client
    await client.aclose()


def store_at(server: Store, max_jobs: int = 100, max_bytes: int = 2**30) -> RedisStore:
    return RedisStore(server.url, max_jobs, max_bytes, ttl=100)


async def test_a_job_is_kept_finished_and_removed(server: Store, raw: Redis) -> None:
    store = store_at(server)
    r = record()
    await store.add(r, b"0123456789")
    assert await raw.get(PREFIX + r.id + ":in") == b"0123456789"
    r.status = "translating"
    assert await store.save(r)
    assert await store.load(r.id) == r
    assert await raw.ttl(PREFIX + r.id) == -1  # a running job never expires
    r.status, r.finished, r.result_bytes = "done", time.time(), 3
    assert await store.finish(r, b"abc")
    assert await store.result(r.id) == b"abc"
    assert await raw.get(PREFIX + r.id + ":in") is None
    for key in (PREFIX + r.id, PREFIX + r.id + ":out"):
        assert 100 < await raw.ttl(key) <= 160  # the TTL and a margin: the sweeps are first
    assert [x.id for x in await store.records()] == [r.id]
    await store.delete(r.id)
    assert await store.load(r.id) is None and await store.result(r.id) is None
    assert not await store.save(r)  # gone: a save does not bring it back
    assert await raw.hlen(INDEX) == 0
    assert await store.load("../" + r.id) is None
    await store.aclose()


async def test_the_bounds_hold_over_every_server(server: Store, raw: Redis) -> None:
    one, two = store_at(server, max_jobs=2), store_at(server, max_jobs=2)
    await one.add(record(), b"x")
    await two.add(record(), b"x")
    with pytest.raises(JobStoreFull, match="holds 2 documents"):
        await one.add(record(), b"x")
    gone = (await one.records())[0]
    await raw.delete(PREFIX + gone.id)  # expired in the store: its place is free again
    await one.add(record(), b"x")
    small = store_at(server, max_bytes=100)
    await raw.flushdb()
    await small.add(record(upload=40), b"x" * 40)  # counts 80
    with pytest.raises(JobStoreFull, match="80 of its 100 bytes"):
        await small.add(record(upload=20), b"x" * 20)
    for s in (one, two, small):
        await s.aclose()


async def test_a_job_taken_by_one_server_is_answered_by_another(server: Store, raw: Redis) -> None:
    fake = FakeTranslator()
    async with (
        Jobs(make_service(fake), lambda: fake, store_at(server)) as a,
        Jobs(make_service(fake), lambda: fake, store_at(server)) as b,
    ):
        made, key = await a.submit("notes.txt", b"Good morning.", Ask("en", "fr"), Caller())
        await a.finished(made.id)
        seen = await b.get(made.id, key, Caller())
        assert (seen.status, seen.segments_done) == ("done", 1)
        assert (await b.result(made.id, key, Caller()))[1] == b"[fr] Good morning."
        await b.delete(made.id, key, Caller())
        assert await a.store.load(made.id) is None


async def test_a_store_that_is_down_is_a_503_within_its_timeout() -> None:
    store = RedisStore(f"redis://127.0.0.1:{free_port()}/0", 10, 2**20, 100, timeout=1.0)
    started = time.monotonic()
    with pytest.raises(JobStoreFailed, match="failed to keep a document") as caught:
        await store.add(record(), b"x")
    assert caught.value.status_code == 503
    with pytest.raises(JobStoreFailed):
        await store.load(record().id)
    assert time.monotonic() - started < 5
    await store.aclose()


def test_the_server_keeps_its_documents_where_its_settings_say(
    server: Store, tmp_path: Path
) -> None:
    from dragoman.api.app import job_store_of
    from dragoman.jobs.store import DirStore

    assert isinstance(job_store_of(ServeSettings(documents_url=server.url)), RedisStore)
    folder = job_store_of(ServeSettings(data_dir=tmp_path))
    assert isinstance(folder, DirStore) and folder.where == str(tmp_path / "documents")
    with pytest.raises(ValidationError, match="give one"):
        ServeSettings(documents_url=server.url, documents_dir=tmp_path)
    with pytest.raises(ValidationError, match="redis://"):
        ServeSettings(documents_url="http://127.0.0.1:6379")
