"""Stored glossaries in a real Redis-protocol server (--glossary-url): shared by every server
given the store (one identity, the bound per key counted over all of them), parsed once per
server, gone everywhere once deleted anywhere; a corrupt value is left out, and a store that is
down or silent is a 503 within the timeout, never a hang."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from dataclasses import replace

import pytest
from redis.asyncio import Redis

from dragoman.bench.servers import free_port
from dragoman.bench.store import Store, start_store
from dragoman.errors import InvalidRequest
from dragoman.metrics import Metrics
from dragoman.service import glossary_shared
from dragoman.service.cache_store import encode
from dragoman.service.glossary import (
    MAX_GLOSSARIES,
    GlossaryNotFound,
    GlossaryStoreFailed,
    made,
    oldest_first,
    to_json,
)
from dragoman.service.glossary_shared import PREFIX, SharedGlossaries

ENTRIES = (("Save", "Enregistrer"), ("log in", "se connecter"))


@pytest.fixture
async def servers(store: Store, raw: Redis) -> AsyncIterator[list[SharedGlossaries]]:
    """Two servers' stores on the one Redis-protocol server."""
    async with SharedGlossaries(store.url) as a, SharedGlossaries(store.url) as b:
        yield [a, b]


async def test_a_glossary_made_on_one_server_is_seen_used_and_deleted_on_another(
    servers: list[SharedGlossaries], store: Store
) -> None:
    a, b = servers
    assert await a.identity() == await b.identity() is not None
    g = await a.create("ui", "en", "fr", ENTRIES, "k1")
    assert await b.get(g.glossary_id, "k1") == g
    assert [x.glossary_id for x in await b.owned("k1")] == [g.glossary_id]
    assert await b.owned("k2") == [] and await b.owned(None) == []
    for other in ("k2", None):  # another key's: as never made
        with pytest.raises(GlossaryNotFound):
            await b.get(g.glossary_id, other)
        with pytest.raises(GlossaryNotFound):
            await b.delete(g.glossary_id, other)
    # A restart: a new process on the same store sees it, under the same identity.
    async with SharedGlossaries(store.url) as restarted:
        assert await restarted.identity() == await a.identity()
        assert (await restarted.get(g.glossary_id, "k1")).entries == ENTRIES
    await b.delete(g.glossary_id, "k1")
    for server in (a, b):  # a kept its parsed copy: the next lookup finds it gone all the same
        with pytest.raises(GlossaryNotFound):
            await server.get(g.glossary_id, "k1")
        assert await server.owned("k1") == []


async def test_a_glossary_is_parsed_once_per_server(servers: list[SharedGlossaries]) -> None:
    a, b = servers
    g = await a.create("ui", "en", "fr", ENTRIES, None)
    first = await b.get(g.glossary_id, None)
    assert await b.get(g.glossary_id, None) is first  # kept, not read and parsed again
    assert await b.owned(None) == [g.summary()]
    assert await a.get(g.glossary_id, None) is g


async def test_a_large_glossary_round_trips_made_and_parsed_in_a_thread(
    servers: list[SharedGlossaries], monkeypatch: pytest.MonkeyPatch
) -> None:
    """5,000 long entries held the event loop ~60 ms, made and parsed on it."""
    a, b = servers
    threaded = 0
    to_thread = asyncio.to_thread

    async def counted(*args, **kwargs):  # type: ignore[no-untyped-def]
        nonlocal threaded
        threaded += 1
        return await to_thread(*args, **kwargs)

    monkeypatch.setattr(asyncio, "to_thread", counted)
    small = await a.create("small", "en", "fr", ENTRIES, None)
    assert (await b.get(small.glossary_id, None)) == small
    assert threaded == 0
    entries = tuple((f"term {i} " + "x" * 180, f"cible {i} " + "y" * 180) for i in range(5000))
    g = await a.create("big", "en", "fr", entries, None)
    assert threaded == 1
    assert (await b.get(g.glossary_id, None)).entries == entries
    assert threaded == 2
    assert await b.owned(None) == [small.summary(), g.summary()]


async def test_a_list_reads_no_entries(servers: list[SharedGlossaries], raw: Redis) -> None:
    """A list read every glossary's value and parsed its entries: 12 MB for one of 5,000 long
    non-ASCII entries, and 30 of them took over the 1 s bound (a 503 at every list), each
    parsed to be dropped again from what a server keeps."""
    a, b = servers
    entries = tuple((f"{i:05d}" + "é" * 195, "ж" * 200) for i in range(5000))
    made = [await a.create(f"big{i}", "en", "fr", entries, "k1") for i in range(3)]
    await raw.config_resetstat()
    listed = await b.owned("k1")
    assert listed == oldest_first(g.summary() for g in made)
    assert listed[0].entry_count == 5000
    read = await raw.info("commandstats")
    assert not {"cmdstat_get", "cmdstat_mget", "cmdstat_getrange"} & read.keys(), read
    assert not b._loaded  # nothing parsed to be listed
    assert (await b.get(made[0].glossary_id, "k1")).entries == entries


class Counted(tuple[tuple[str, str], ...]):
    """Entries that count how often their length is asked."""

    asked = 0

    def __len__(self) -> int:
        Counted.asked += 1
        return super().__len__()


async def test_keeping_a_glossary_costs_the_same_however_many_are_kept(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each use summed the entries of every glossary kept: 19 ms on the event loop with
    100,000 one-entry glossaries kept (left by a client making, using and deleting one
    through a route, on the servers its deletes did not reach)."""
    monkeypatch.setattr(glossary_shared, "MAX_KEPT_TERMS", 1500)
    shared = SharedGlossaries("redis://127.0.0.1:1/0")  # never asked
    new = made("g", "en", "fr", ENTRIES)
    kept = [replace(new, glossary_id=f"{i}", entries=Counted(ENTRIES)) for i in range(1000)]
    for g in kept:
        shared._keep(g)
    Counted.asked = 0
    shared._keep(kept[0])
    assert Counted.asked < 10
    # The bound in entries holds, the least recently used dropped first.
    assert len(shared._loaded) == 750
    assert shared._loaded.get(kept[0].glossary_id) is kept[0]
    assert shared._loaded.get(kept[1].glossary_id) is None
    assert shared._loaded.get(kept[-1].glossary_id) is kept[-1]


async def test_the_bound_per_key_holds_over_every_server_sharing_the_store(
    servers: list[SharedGlossaries], raw: Redis
) -> None:
    a, b = servers
    made = [await (a, b)[i % 2].create(f"g{i}", "en", "fr", ENTRIES, "k1") for i in range(100)]
    assert len(made) == MAX_GLOSSARIES
    for server in servers:
        with pytest.raises(InvalidRequest, match="at most 100"):
            await server.create("one more", "en", "fr", ENTRIES, "k1")
    await b.create("another key's", "en", "fr", ENTRIES, "k2")
    listed = await a.owned("k1")
    assert {g.glossary_id for g in listed} == {g.glossary_id for g in made}
    order = [(g.creation_time, g.glossary_id) for g in listed]
    assert order == sorted(order)  # oldest first (made in one millisecond: by id)
    # One deleted, one lost by the store (evicted, deleted by hand): two places free.
    await a.delete(made[0].glossary_id, "k1")
    await raw.delete(PREFIX + made[1].glossary_id)
    await b.create("again", "en", "fr", ENTRIES, "k1")
    await a.create("and again", "en", "fr", ENTRIES, "k1")
    with pytest.raises(InvalidRequest, match="at most 100"):
        await b.create("one more", "en", "fr", ENTRIES, "k1")


async def test_a_flushed_store_gets_one_new_identity_every_server_names(
    servers: list[SharedGlossaries], store: Store, raw: Redis
) -> None:
    """A store flushed, or restarted empty, was named by its old id on the servers that had
    asked it and by a new one on a server started after: the route refused their glossaries
    (400 glossaries_not_shared) until every server was restarted."""
    a, b = servers
    before = await a.identity()
    assert await b.identity() == before is not None
    await raw.flushdb()
    async with SharedGlossaries(store.url) as started_after:
        after = await started_after.identity()
        assert after != before
        for server in servers:
            await named(server, after)


async def named(server: SharedGlossaries, store_id: str | None = None, within: float = 10) -> str:
    """What `server` names once it names `store_id` (None: any); it reads the store's id in
    the background."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within
    while (now := await server.identity()) is None or store_id not in (None, now):
        assert loop.time() < deadline, f"still names {now}, not {store_id or 'one'}"
        await asyncio.sleep(0.01)
    return now


async def test_the_store_id_is_named_without_waiting_on_the_store(silent: str) -> None:
    """/ready asks it: a silent store held each /ready for the store's bound (1 s; the
    probes' timeout is 2)."""
    async with SharedGlossaries(silent, timeout=3) as shared:
        for _ in range(3):
            assert await asyncio.wait_for(shared.identity(), 1) is None


async def test_stores_of_other_databases_are_told_apart(store: Store, raw: Redis) -> None:
    other = store.url.rsplit("/", 1)[0] + "/1"
    async with SharedGlossaries(store.url) as a, SharedGlossaries(other) as b:
        assert await a.identity() != await b.identity()
        g = await a.create("ui", "en", "fr", ENTRIES, None)
        with pytest.raises(GlossaryNotFound):
            await b.get(g.glossary_id, None)
    async with Redis.from_url(other) as one:
        await one.flushdb()


async def test_a_corrupt_moved_or_foreign_value_is_left_out_logged_once_and_counted(
    servers: list[SharedGlossaries], store: Store, raw: Redis, caplog: pytest.LogCaptureFixture
) -> None:
    a, b = servers
    kept = await a.create("kept", "en", "fr", ENTRIES, None)
    broken = [await a.create(f"g{i}", "en", "fr", ENTRIES, None) for i in range(4)]
    value = await raw.get(PREFIX + broken[0].glossary_id)
    assert value is not None
    await raw.set(PREFIX + broken[0].glossary_id, value[:-1])  # cut short
    await raw.set(PREFIX + broken[1].glossary_id, await raw.get(PREFIX + kept.glossary_id))
    wrong = to_json(broken[2]).replace('"kept"', "5").replace('"g2"', "5")  # a name not text
    await raw.set(PREFIX + broken[2].glossary_id, encode(broken[2].glossary_id.encode(), wrong))
    await raw.set(PREFIX + broken[3].glossary_id, b"\x01not a dragoman value")
    # A list shows their summaries; each use reads the store's value (b never read them).
    listed = {g.glossary_id for g in await b.owned(None)}
    assert listed == {g.glossary_id for g in [kept, *broken]}
    metrics = Metrics()
    async with SharedGlossaries(store.url, metrics) as counted:
        for _ in range(2):
            for g in broken:
                with pytest.raises(GlossaryNotFound):
                    await b.get(g.glossary_id, None)
                with pytest.raises(GlossaryNotFound):
                    await counted.get(g.glossary_id, None)
    # each unreadable value read is counted, though logged once
    assert metrics.glossary_store_errors.labels("invalid")._value.get() == 8
    # A summary that is not one: left out of the list.
    await raw.hset(f"{PREFIX}by:-", broken[0].glossary_id, b"\x01not a summary")
    await raw.hset(
        f"{PREFIX}by:-", broken[1].glossary_id, await raw.hget(f"{PREFIX}by:-", kept.glossary_id)
    )
    listed = {g.glossary_id for g in await b.owned(None)}
    assert listed == {g.glossary_id for g in [kept, *broken[2:]]}
    unreadable = [r for r in caplog.records if "unreadable" in r.getMessage()]
    assert len(unreadable) == 8  # once each a server, not at every request
    for wrong_id in ("../x", kept.glossary_id.upper(), "store-id", "by:-"):
        with pytest.raises(GlossaryNotFound):
            await b.get(wrong_id, None)


async def assert_refused_within(call, bound: float) -> GlossaryStoreFailed:  # type: ignore[no-untyped-def]
    loop = asyncio.get_running_loop()
    started = loop.time()
    with pytest.raises(GlossaryStoreFailed) as failed:
        await asyncio.wait_for(call, 30)
    assert loop.time() - started < bound
    assert failed.value.status_code == 503
    return failed.value


async def test_a_store_that_is_down_is_a_503_then_answers_again(
    tmp_path_factory: pytest.TempPathFactory, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="dragoman.service.glossary_shared")
    port = free_port()  # nothing listens there yet
    zero = "0" * 8 + "-0000-4000-8000-" + "0" * 12
    async with SharedGlossaries(f"redis://user:secret@127.0.0.1:{port}/0") as shared:
        assert await shared.identity() is None  # /ready names no store: the route waits
        calls = (
            shared.create("ui", "en", "fr", ENTRIES, None),
            shared.owned(None),
            shared.get(zero, None),
            shared.delete(zero, None),
        )
        for call in calls:
            error = await assert_refused_within(call, 10)
            assert "the glossary store does not answer" in error.message
        errors = [r for r in caplog.records if r.levelno == logging.ERROR]
        assert len(errors) == 1  # once per outage
        assert "secret" not in caplog.text and f"127.0.0.1:{port}" in caplog.text
    async with SharedGlossaries(f"redis://127.0.0.1:{port}/0") as shared:
        await assert_refused_within(shared.get(zero, None), 10)
        up = start_store(tmp_path_factory.mktemp("late"), port=port)
        try:
            await named(shared)
            g = await shared.create("ui", "en", "fr", ENTRIES, None)
            assert await shared.get(g.glossary_id, None) == g
            assert "answers again" in caplog.text
        finally:
            up.stop()
        # Down again, with the glossary parsed here: its use is still a clear error, not a
        # glossary kept working from memory while the store cannot say it was deleted.
        await assert_refused_within(shared.get(g.glossary_id, None), 10)
        assert await shared.identity() is not None  # it named the store once: it still does


@pytest.fixture
async def silent() -> AsyncIterator[str]:
    """The URL of a server that accepts and never answers."""
    held: list[asyncio.StreamWriter] = []

    async def mute(_reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        held.append(writer)

    server = await asyncio.start_server(mute, "127.0.0.1", 0)
    try:
        yield f"redis://127.0.0.1:{server.sockets[0].getsockname()[1]}/0"
        assert held, "the calls reached the silent server"
    finally:
        for w in held:
            w.close()
        server.close()
        await server.wait_closed()


async def test_a_silent_store_is_a_503_within_the_timeout(
    silent: str, caplog: pytest.LogCaptureFixture
) -> None:
    async with SharedGlossaries(silent, timeout=0.2) as shared:
        await assert_refused_within(shared.owned(None), 3)
        await assert_refused_within(shared.create("ui", "en", "fr", ENTRIES, None), 3)
    # The log says why: a timeout's own text is empty ("TimeoutError: ").
    assert "(TimeoutError: no answer within 0.2 s)" in caplog.text
