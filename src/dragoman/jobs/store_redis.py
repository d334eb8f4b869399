"""Document jobs in a Redis-protocol server (Valkey, Redis: --documents-url), so that every
server given the same store answers any job's status and result, whichever took the upload.

Keys: `dragoman:d:<id>` a job's status (its JSON), `<that>:in` its upload while it runs,
`<that>:out` its result, and `dragoman:d:index` a hash of every job's id to the bytes it counts
for (`store.weight`). A job is added by one script that counts the jobs that still exist (and
forgets ids whose job is gone) and reserves the new one only within the bounds, so they hold
over every server. A finished job's keys expire a little after --documents-ttl; the servers'
sweeps remove them on time. A store that fails or does not answer within `timeout` is a 503
`document_store_failed`, never a hang."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

from dragoman.errors import JobStoreFailed, JobStoreFull
from dragoman.jobs.record import JobRecord, is_id
from dragoman.jobs.store import RETRY_CAP, check_room, weight
from dragoman.service.cache_store import client, redact

PREFIX = "dragoman:d:"
INDEX = PREFIX + "index"
_CONNECTIONS = 16
EXPIRY_MARGIN = 60
"""Seconds a finished job's keys outlive --documents-ttl (the sweeps remove them on time)."""

# KEYS[1] the index; ARGV: the most jobs, the most bytes, the id, its weight, its status JSON,
# the key prefix. 1 when reserved, else 0.
_ADD = """
local n, used = 0, 0
local kept = redis.call('HGETALL', KEYS[1])
for i = 1, #kept, 2 do
  if redis.call('EXISTS', ARGV[6] .. kept[i]) == 1 then
    n = n + 1
    used = used + tonumber(kept[i + 1])
  else
    redis.call('HDEL', KEYS[1], kept[i])
  end
end
if n >= tonumber(ARGV[1]) or used + tonumber(ARGV[4]) > tonumber(ARGV[2]) then
  return 0
end
redis.call('SET', ARGV[6] .. ARGV[3], ARGV[5])
redis.call('HSET', KEYS[1], ARGV[3], ARGV[4])
return 1
"""


class RedisStore:
    def __init__(
        self, url: str, max_jobs: int, max_bytes: int, ttl: float, timeout: float = 10.0
    ) -> None:
        # Uploads and results run to --max-file-bytes: a longer timeout than the caches'.
        self._redis = client(url, timeout, _CONNECTIONS)
        self._add = self._redis.register_script(_ADD)
        self.where = redact(url)
        self._max_jobs = max_jobs
        self._max_bytes = max_bytes
        self._ttl = ttl
        self._timeout = timeout

    @contextlib.asynccontextmanager
    async def _call(self, what: str) -> AsyncIterator[None]:
        try:
            async with asyncio.timeout(self._timeout):
                yield
        except JobStoreFull:
            raise
        except Exception as exc:  # any failure of the store: a 503, not a 500
            raise JobStoreFailed(
                f"the document store {self.where} failed to {what} ({type(exc).__name__}); "
                "retry shortly",
                5,
            ) from None

    async def add(self, record: JobRecord, upload: bytes) -> None:
        args: list[Any] = [
            self._max_jobs,
            self._max_bytes,
            record.id,
            weight(record),
            record.to_json(),
            PREFIX,
        ]
        async with self._call("keep a document"):
            reserved = await self._add(keys=[INDEX], args=args)
            if not reserved:
                check_room(
                    await self.records(),
                    record.upload_bytes,
                    self._max_jobs,
                    self._max_bytes,
                    self._ttl,
                )
                raise JobStoreFull(
                    "the document store is full; retry once finished documents expire",
                    RETRY_CAP,
                )
            await self._redis.set(PREFIX + record.id + ":in", upload)

    async def save(self, record: JobRecord) -> bool:
        async with self._call("save a document's status"):
            ttl = self._expiry(record)
            written = await self._redis.set(PREFIX + record.id, record.to_json(), xx=True, ex=ttl)
            return bool(written)

    def _expiry(self, record: JobRecord) -> int | None:
        return int(self._ttl) + EXPIRY_MARGIN if record.final else None

    async def finish(self, record: JobRecord, result: bytes | None) -> bool:
        name = PREFIX + record.id
        ttl = self._expiry(record)
        async with self._call("store a document's result"):
            if not await self._redis.exists(name):
                return False
            if result is not None:
                await self._redis.set(name + ":out", result, ex=ttl)
            await self._redis.delete(name + ":in")
            await self._redis.hset(INDEX, record.id, str(weight(record)))
            return bool(await self._redis.set(name, record.to_json(), xx=True, ex=ttl))

    async def load(self, job_id: str) -> JobRecord | None:
        if not is_id(job_id):
            return None
        async with self._call("read a document's status"):
            raw = await self._redis.get(PREFIX + job_id)
        return None if raw is None else JobRecord.from_json(raw)

    async def result(self, job_id: str) -> bytes | None:
        if not is_id(job_id):
            return None
        async with self._call("read a document's result"):
            data = await self._redis.get(PREFIX + job_id + ":out")
        return data if isinstance(data, bytes) else None

    async def delete(self, job_id: str) -> None:
        if not is_id(job_id):
            return
        name = PREFIX + job_id
        async with self._call("remove a document"):
            await self._redis.delete(name, name + ":in", name + ":out")
            await self._redis.hdel(INDEX, job_id)

    async def records(self) -> list[JobRecord]:
        async with self._call("list the documents"):
            ids = [
                i.decode() if isinstance(i, bytes) else i for i in await self._redis.hkeys(INDEX)
            ]
            raws = await self._redis.mget([PREFIX + i for i in ids]) if ids else []
            gone = [i for i, raw in zip(ids, raws, strict=True) if raw is None]
            if gone:
                await self._redis.hdel(INDEX, *gone)
        found = [JobRecord.from_json(raw) for raw in raws if raw is not None]
        return [r for r in found if r is not None]

    async def aclose(self) -> None:
        await self._redis.aclose()
