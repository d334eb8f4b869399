"""The shared level of the translation cache: a Redis-protocol server (Valkey, Redis) that the
servers behind `dragoman route` all read and write, so a sentence one of them translated is a
hit on the others, and on a restarted one. The in-process cache stays the first level; this one
is read on its miss and written, in the background, after each engine translation.

It fails open: a store that is down or slow costs a lookup at most `timeout`, after which it is
left alone for `retry_seconds` (lookups miss at once, writes are dropped) and then tried again;
a translation never fails on it. Keys are the local cache's hash (no text in them); a value
carries a version byte and a checksum bound to its key, so a corrupt or foreign value reads as
a miss."""

from __future__ import annotations

import asyncio
import hashlib
import logging
import time
from typing import TYPE_CHECKING
from urllib.parse import unquote_plus

from dragoman.metrics import Metrics

if TYPE_CHECKING:
    from redis.asyncio import Redis

log = logging.getLogger(__name__)

PREFIX = "dragoman:t:"
_VERSION = b"\x01"
_CHECK = 8  # bytes of checksum
_MAX_WRITES = 1024  # writes in flight; past it (a slow store) new ones are dropped
# Connections to the store, each call waiting its turn within its timeout. Past the client's
# own pool bound (100 by default) a call failed as if the store were down, and it was left
# alone, healthy, while a busy server's lookups all missed.
_CONNECTIONS = 64


def _name(key: bytes) -> str:
    return PREFIX + key.hex()


def _checksum(key: bytes, raw: bytes) -> bytes:
    return hashlib.blake2b(raw, digest_size=_CHECK, key=key[:64]).digest()


def encode(key: bytes, text: str) -> bytes:
    raw = text.encode()
    return _VERSION + _checksum(key, raw) + raw


def decode(key: bytes, value: object) -> str | None:
    """The text stored under `key`, or None when `value` is not one this module wrote for it."""
    if not isinstance(value, bytes) or value[:1] != _VERSION or len(value) < 1 + _CHECK:
        return None
    check, raw = value[1 : 1 + _CHECK], value[1 + _CHECK :]
    if check != _checksum(key, raw):
        return None
    try:
        return raw.decode()
    except UnicodeDecodeError:
        return None


def redact(url: str) -> str:
    """The URL with its credentials hidden, for logs. Read as redis-py's `parse_url` reads it
    (urllib's urlparse): the userinfo ends at the netloc's last '@', so a password may hold
    unescaped '@'s, and all of the userinfo is hidden. An '@' past the netloc (a password with
    an unescaped '/', '?' or '#', which ends the netloc, the client reading its first part)
    hides everything up to it (the last '@' before a query field's '='): more than the client
    reads rather than less."""
    head, sep, rest = url.partition("//")
    if sep:
        ends = [i for i in (rest.find(c) for c in "/?#") if i >= 0]
        netloc = rest[: min(ends, default=len(rest))]
        if "@" in netloc:
            at = netloc.rfind("@")
        else:
            field = rest.find("=")
            at = rest.rfind("@", 0, field if field >= 0 else len(rest)) if netloc else -1
        if at >= 0:
            url = f"{head}//***@{rest[at + 1 :]}"
    return _hide_query_password(url)


def _hide_query_password(url: str) -> str:
    """The client also takes a password from the query (`unix:///run/valkey.sock?password=...`,
    as its docs show). Its fields as parse_qs splits them: at '&', the name percent-decoded;
    a value is hidden up to the next '&' (past a '#', which the client would have cut it at)."""
    head, sep, query = url.partition("?")
    if not sep:
        return url
    fields = query.split("&")
    for i, field in enumerate(fields):
        name, eq, value = field.partition("=")
        if eq and value and unquote_plus(name).strip().lower() == "password":
            fields[i] = f"{name}=***"
    return f"{head}?{'&'.join(fields)}"


def has_password(url: str | None) -> bool:
    """Whether a store URL holds a password (before the host, or in the query)."""
    return url is not None and redact(url) != url


def client(url: str, timeout: float, connections: int) -> Redis:
    """A client of the store at `url`: each connection and reply within `timeout`, at most
    `connections` at once (the caller's semaphore makes calls wait their turn, within their
    timeout, rather than fail past the pool's bound)."""
    from redis.asyncio import Redis
    from redis.asyncio.retry import Retry
    from redis.backoff import NoBackoff

    # One retry, on a fresh connection, within the call's timeout: a pooled connection the
    # store dropped while idle (a restart, its idle timeout, a NAT) failed the first call
    # after it, and a healthy store was left alone. A store that is down fails both.
    return Redis.from_url(
        url,
        socket_timeout=timeout,
        socket_connect_timeout=timeout,
        retry=Retry(NoBackoff(), 1),
        max_connections=connections,
    )


class SharedStore:
    def __init__(
        self,
        url: str,
        ttl: int,
        metrics: Metrics,
        timeout: float = 0.25,
        retry_seconds: float = 5.0,
    ) -> None:
        self._redis = client(url, timeout, _CONNECTIONS)
        self._connections = asyncio.Semaphore(_CONNECTIONS)
        self.where = redact(url)
        self._ttl = ttl
        self._timeout = timeout
        self._retry_seconds = retry_seconds
        self._failing = False
        self._rest_until = 0.0
        self._writes: set[asyncio.Task[None]] = set()
        self._metrics = metrics
        metrics.cache_hits.labels("shared")  # shown at 0 from the start
        metrics.cache_misses.labels("shared")
        for kind in ("get", "set", "invalid"):
            metrics.cache_store_errors.labels(kind)

    async def get(self, key: bytes) -> str | None:
        """The text stored for `key`; None (a counted miss, whatever the cause: hits and misses
        add up to the lookups) when it has none, or it fails, or is resting."""
        text = await self._lookup(key)
        (self._metrics.cache_misses if text is None else self._metrics.cache_hits).labels(
            "shared"
        ).inc()
        return text

    async def _lookup(self, key: bytes) -> str | None:
        if self._resting():
            return None
        try:
            async with asyncio.timeout(self._timeout), self._connections:
                value = await self._redis.get(_name(key))
        except Exception as error:  # any failure of the store is a miss, never a failed request
            self._failed("get", error)
            return None
        self._answered()
        text = None if value is None else decode(key, value)
        if value is not None and text is None:
            self._metrics.cache_store_errors.labels("invalid").inc()
        return text

    def put(self, key: bytes, text: str) -> None:
        """Write in the background: the answer does not wait for the store."""
        if self._resting() or len(self._writes) >= _MAX_WRITES:
            return
        task = asyncio.get_running_loop().create_task(self._set(key, text))
        self._writes.add(task)
        task.add_done_callback(self._writes.discard)

    async def _set(self, key: bytes, text: str) -> None:
        try:
            async with asyncio.timeout(self._timeout), self._connections:
                await self._redis.set(_name(key), encode(key, text), ex=self._ttl)
        except Exception as error:
            self._failed("set", error)
            return
        self._answered()

    def _resting(self) -> bool:
        return self._failing and time.monotonic() < self._rest_until

    def _failed(self, op: str, error: Exception) -> None:
        from redis.exceptions import ResponseError

        self._metrics.cache_store_errors.labels(op).inc()
        if not isinstance(error, ResponseError):  # it answered: no need to rest
            self._rest_until = time.monotonic() + self._retry_seconds
        if not self._failing:  # logged once per outage
            self._failing = True
            log.warning(
                "cache store %s: %s failed (%s: %s); translating without it, trying again "
                "every %g s",
                self.where,
                op,
                type(error).__name__,
                error,
                self._retry_seconds,
            )

    def _answered(self) -> None:
        if self._failing:
            self._failing = False
            log.info("cache store %s answers again", self.where)

    async def aclose(self) -> None:
        """Let the last writes land (bounded), then close the connections."""
        if self._writes:
            await asyncio.wait(set(self._writes), timeout=self._timeout)
        for task in list(self._writes):
            task.cancel()
        await self._redis.aclose()
