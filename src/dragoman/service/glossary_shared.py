"""Stored glossaries in a Redis-protocol server (Valkey, Redis: --glossary-url), so every server
given the same store shares them without a shared volume, and they outlive any server's restart.

Keys: `dragoman:g:<id>` a glossary (its JSON in the cache store's envelope: a version byte and
a checksum bound to the id, so a corrupt or moved value reads as none), `dragoman:g:by:<key
digest>` a hash of the glossaries a key made (`-` with keys off), each id to its summary (what
a list shows: a list reads no entries), `dragoman:g:store-id` the store's identity, made by
the first server (SET NX) and read by the others. A glossary is made by one script that counts
the key's glossaries and writes it, so the bound per key holds over every server.

Each server parses a glossary once and keeps it (glossaries are never edited, only deleted);
every later use asks the store only whether it still exists, so one deleted through any server
is gone on all of them at their next lookup. A store that is down or silent answers each call
within `timeout` with GlossaryStoreFailed (503), never a hang; translations without a glossary
never ask it."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import uuid
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable
from typing import TypeVar

from dragoman.engine.protocol import Terms
from dragoman.metrics import Metrics
from dragoman.service.cache_store import client, decode, encode, redact
from dragoman.service.glossary import (
    BUILT_OFF_LOOP,
    MAX_GLOSSARIES,
    Glossary,
    GlossaryStoreFailed,
    Summary,
    from_json,
    is_id,
    made,
    not_found,
    oldest_first,
    summary_from_json,
    summary_to_json,
    to_json,
    too_many,
)

log = logging.getLogger(__name__)
_Read = TypeVar("_Read", Glossary, Summary)

PREFIX = "dragoman:g:"
STORE_ID = PREFIX + "store-id"
_CONNECTIONS = 16
PARSED_OFF_LOOP = 100_000
"""Bytes of stored values from which they are parsed in a thread."""
MAX_KEPT_TERMS = 100_000
"""Entries of the parsed glossaries a server keeps (the least recently used dropped first)."""

# Counts the key's glossaries that still exist (forgetting ids whose glossary is gone:
# deleted by hand, or evicted), and stores the new one only under the bound.
_CREATE = """
local n = 0
for _, id in ipairs(redis.call('HKEYS', KEYS[1])) do
  if redis.call('EXISTS', ARGV[5] .. id) == 1 then
    n = n + 1
  else
    redis.call('HDEL', KEYS[1], id)
  end
end
if n >= tonumber(ARGV[1]) then
  return 0
end
redis.call('SET', KEYS[2], ARGV[3])
redis.call('HSET', KEYS[1], ARGV[2], ARGV[4])
return 1
"""


def _made(
    name: str, source: str, target: str, entries: Terms, owner: str | None
) -> tuple[Glossary, bytes, bytes]:
    """A new glossary, its value and its summary's (5,000 long entries: ~50 ms, in a
    thread)."""
    g = made(name, source, target, entries, owner)
    key = g.glossary_id.encode()
    return g, encode(key, to_json(g)), encode(key, summary_to_json(g.summary()))


class Kept:
    """Parsed glossaries by id, the least recently used dropped first past `bound` entries.
    The total is counted as they come and go: summed at each use, it cost 19 ms a lookup on
    the event loop with 100,000 one-entry glossaries kept (what a client making, using and
    deleting one through a route leaves on the servers the deletes did not reach)."""

    def __init__(self, bound: int) -> None:
        self._bound = bound
        self._kept: OrderedDict[str, Glossary] = OrderedDict()
        self.entries = 0

    def __len__(self) -> int:
        return len(self._kept)

    def get(self, glossary_id: str) -> Glossary | None:
        return self._kept.get(glossary_id)

    def pop(self, glossary_id: str) -> None:
        gone = self._kept.pop(glossary_id, None)
        if gone is not None:
            self.entries -= len(gone.entries)

    def keep(self, g: Glossary) -> Glossary:
        self.pop(g.glossary_id)
        self._kept[g.glossary_id] = g
        self.entries += len(g.entries)
        while self.entries > self._bound and len(self._kept) > 1:
            _, oldest = self._kept.popitem(last=False)
            self.entries -= len(oldest.entries)
        return g


def _key(glossary_id: str) -> str:
    return PREFIX + glossary_id


def _owner_key(owner: str | None) -> str:
    return f"{PREFIX}by:{owner or '-'}"


class SharedGlossaries:
    def __init__(self, url: str, metrics: Metrics | None = None, timeout: float = 1.0) -> None:
        self._redis = client(url, timeout, _CONNECTIONS)
        self._create_script = self._redis.register_script(_CREATE)
        self._connections = asyncio.Semaphore(_CONNECTIONS)
        self.where = redact(url)
        self._timeout = timeout
        self._store_id: str | None = None
        self._asking: asyncio.Task[None] | None = None
        self._loaded = Kept(MAX_KEPT_TERMS)
        self._unreadable: set[str] = set()  # ids already reported
        self._failing = False
        self._errors = (
            {
                kind: metrics.glossary_store_errors.labels(kind)  # shown at 0 from the start
                for kind in ("read", "write", "invalid")
            }
            if metrics is not None
            else None
        )

    def _count(self, kind: str) -> None:
        if self._errors is not None:
            self._errors[kind].inc()

    async def identity(self) -> str | None:
        """The store's id as last read; None before the store has answered. /ready asks it
        every few seconds and never waits on the store (one down or silent held each /ready
        for the store's 1 s bound, half the probes' timeout): each call reads it again in the
        background, so a store flushed, or restarted empty, gets a new id from the first
        server to ask and every server names that one (they kept the old one, a server
        started after named the new one, and the route refused their glossaries)."""
        if self._asking is None or self._asking.done():
            self._asking = asyncio.create_task(self._read_identity())
        return self._store_id

    async def _read_identity(self) -> None:
        with contextlib.suppress(GlossaryStoreFailed):
            async with self._call("identity"):
                await self._redis.set(STORE_ID, str(uuid.uuid4()), nx=True)
                value = await self._redis.get(STORE_ID)
            if isinstance(value, bytes):
                self._store_id = value.decode("ascii", errors="replace")

    async def create(
        self, name: str, source: str, target: str, entries: Terms, owner: str | None
    ) -> Glossary:
        new = functools.partial(_made, name, source, target, entries, owner)
        g, value, summary = (
            await asyncio.to_thread(new) if len(entries) >= BUILT_OFF_LOOP else new()
        )
        async with self._call("create"):
            stored = await self._create_script(
                keys=[_owner_key(owner), _key(g.glossary_id)],
                args=[MAX_GLOSSARIES, g.glossary_id, value, summary, PREFIX],
            )
        if not stored:
            raise too_many()
        self._keep(g)
        return g

    async def owned(self, owner: str | None) -> list[Summary]:
        """From the key's summaries, reading no entries (a list of glossaries of 5,000 long
        entries read and parsed them all); a glossary the store lost is left out."""
        async with self._call("list"):
            listed = [
                (i.decode(errors="replace"), value)
                for i, value in (await self._redis.hgetall(_owner_key(owner))).items()
                if isinstance(i, bytes)
            ]
            pipe = self._redis.pipeline(transaction=False)
            for i, _ in listed:
                pipe.exists(_key(i))
            there = await pipe.execute()
        found = (
            self._summary(i, value)
            for (i, value), exists in zip(listed, there, strict=True)
            if exists
        )
        return oldest_first(g for g in found if g is not None and g.owner == owner)

    async def get(self, glossary_id: str, owner: str | None) -> Glossary:
        if not is_id(glossary_id):
            raise not_found(glossary_id)
        g = self._loaded.get(glossary_id)
        answer: object
        async with self._call("get"):
            if g is not None:  # parsed here before: is it still there?
                answer = await self._redis.exists(_key(glossary_id))
            else:
                answer = await self._redis.get(_key(glossary_id))
        if g is not None:
            g = self._still(glossary_id, g, answer)
        else:
            g = (await self._parsed([(glossary_id, answer)])).get(glossary_id)
        if g is None or g.owner != owner:
            raise not_found(glossary_id)
        return g

    async def delete(self, glossary_id: str, owner: str | None) -> None:
        await self.get(glossary_id, owner)
        async with self._call("delete"):
            pipe = self._redis.pipeline(transaction=True)
            pipe.delete(_key(glossary_id))
            pipe.hdel(_owner_key(owner), glossary_id)
            await pipe.execute()
        self._loaded.pop(glossary_id)

    async def __aenter__(self) -> SharedGlossaries:
        await self._read_identity()  # a store down at start: /ready names none until it answers
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._asking is not None:
            self._asking.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._asking
        await self._redis.aclose()

    # -- the store's answers ---------------------------------------------------------------

    def _still(self, glossary_id: str, kept: Glossary, exists: object) -> Glossary | None:
        """A glossary kept here, if the store says it still exists."""
        if exists:
            return self._keep(kept)
        self._loaded.pop(glossary_id)  # deleted through another server
        return None

    async def _parsed(self, values: list[tuple[str, object]]) -> dict[str, Glossary]:
        """The glossaries in the store's values (None: missing), kept here; a large one is
        parsed in a thread (5,000 long entries: ~10 ms)."""
        found = [(i, v) for i, v in values if isinstance(v, bytes)]
        if sum(len(v) for _, v in found) >= PARSED_OFF_LOOP:
            parsed = await asyncio.to_thread(lambda: [self._parse(i, v) for i, v in found])
        else:
            parsed = [self._parse(i, v) for i, v in found]
        return {g.glossary_id: self._keep(g) for g in parsed if g is not None}

    def _parse(self, glossary_id: str, value: bytes) -> Glossary | None:
        return self._read(glossary_id, value, from_json)

    def _summary(self, glossary_id: str, value: object) -> Summary | None:
        if not isinstance(value, bytes):
            return None
        return self._read(glossary_id, value, summary_from_json)

    def _read(
        self, glossary_id: str, value: bytes, parse: Callable[[str, str], _Read]
    ) -> _Read | None:
        """What `value` holds for `glossary_id`, or None (logged once per id) when it is not
        one this module wrote for it."""
        try:
            text = decode(glossary_id.encode(), value) if is_id(glossary_id) else None
            if text is None:
                raise ValueError("its id, envelope or checksum does not match")
            return parse(text, glossary_id)
        except ValueError as exc:
            self._count("invalid")
            if glossary_id not in self._unreadable:  # once, not at every request
                self._unreadable.add(glossary_id)
                log.warning(
                    "glossary %s in %s is unreadable, left out: %s", glossary_id, self.where, exc
                )
            return None

    def _keep(self, g: Glossary) -> Glossary:
        """`g`, kept as the most recently used."""
        return self._loaded.keep(g)

    @contextlib.asynccontextmanager
    async def _call(self, what: str) -> AsyncIterator[None]:
        """One exchange with the store, bounded by the timeout; a failure is a 503."""
        from redis.exceptions import RedisError

        try:
            async with asyncio.timeout(self._timeout), self._connections:
                yield
        except (RedisError, OSError) as error:  # TimeoutError is an OSError
            from redis.exceptions import ResponseError

            self._count("read" if what in _READS else "write")
            if not self._failing:  # logged once per outage
                self._failing = True
                log.error(
                    "glossary store %s: %s failed (%s: %s)",
                    self.where,
                    what,
                    type(error).__name__,
                    str(error) or f"no answer within {self._timeout:g} s",  # a timeout says nothing
                )
            why = "refused the call" if isinstance(error, ResponseError) else "does not answer"
            raise GlossaryStoreFailed(
                f"stored glossaries cannot be {'read' if what in _READS else 'changed'} right "
                f"now: the glossary store {why}; retry later"
            ) from None
        if self._failing:
            self._failing = False
            log.info("glossary store %s answers again", self.where)


_READS = frozenset({"identity", "list", "get"})
