"""The shared cache store against a real Redis-protocol server: values round-trip with a TTL
under hashed keys, corrupt or foreign values read as misses, and a store that is down or
silent fails open (a miss within the timeout, counted, logged once, tried again later)."""

from __future__ import annotations

import asyncio
import logging

import pytest
from redis.asyncio import Redis

from dragoman.bench.servers import free_port
from dragoman.bench.store import Store, start_store
from dragoman.metrics import Metrics
from dragoman.service.cache_store import PREFIX, SharedStore, decode, encode, redact

KEY = bytes(range(16))


@pytest.fixture
def metrics() -> Metrics:
    return Metrics()


def sample(metrics: Metrics, name: str, **labels: str) -> float:
    return metrics.registry.get_sample_value(f"dragoman_{name}", labels) or 0.0


async def eventually(condition, within: float = 10.0) -> None:  # type: ignore[no-untyped-def]
    loop = asyncio.get_running_loop()
    end = loop.time() + within
    while not await condition():
        assert loop.time() < end, "condition not met in time"
        await asyncio.sleep(0.01)


def test_encode_decode_round_trip_and_refuse_what_is_not_ours() -> None:
    value = encode(KEY, "Bonjour à tous 👋")
    assert decode(KEY, value) == "Bonjour à tous 👋"
    assert decode(bytes(16), value) is None  # another key's value
    assert decode(KEY, value[:-1]) is None  # cut short
    assert decode(KEY, b"\x02" + value[1:]) is None  # another version
    assert decode(KEY, b"") is None
    assert decode(KEY, "text") is None
    bad = encode(KEY, "x")[:9] + b"\xff\xfe"
    assert decode(KEY, bad) is None


def test_redact_hides_credentials() -> None:
    assert redact("redis://user:secret@cache:6379/0") == "redis://***@cache:6379/0"
    assert redact("redis://127.0.0.1:6379/0") == "redis://127.0.0.1:6379/0"


def test_redact_hides_a_password_in_the_query() -> None:
    """The client takes `?password=` too (a unix socket's URL has no place before a host)."""
    url = "unix:///run/valkey.sock?db=0&password=hunter2"
    assert redact(url) == "unix:///run/valkey.sock?db=0&password=***"
    assert redact("redis://cache:6379/0?Password=hunter2&db=1").endswith("=***&db=1")


# Passwords as redis-py reads them: urlparse's userinfo ends at the netloc's last '@'.
AT_PASSWORDS = [
    "redis://user:p@SECRET@cache:6379/0",
    "redis://:p@SECRET@cache:6379/0",
    "redis://us@er:p@SECRET@cache:6379/0",
    "rediss://u%40x:p@SECRET%40@cache:6380",
    "redis://user:@p@SECRET@@cache:6379/0",
    "unix://user:p@SECRET@/run/valkey.sock?db=0",
]


@pytest.mark.parametrize("url", AT_PASSWORDS)
def test_redact_hides_a_password_that_holds_an_at_sign(url: str) -> None:
    from redis.asyncio.connection import parse_url

    parsed = parse_url(url)
    assert "SECRET" in parsed["password"]  # the client reads the whole password
    out = redact(url)
    assert "SECRET" not in out and "p@" not in out and "er" not in out.split("//")[1], out
    assert out.startswith(url.split("//")[0] + "//***@")
    assert parsed.get("host", "/run/valkey.sock") in out  # where the store is stays readable


def test_redact_keeps_the_host_and_hides_all_of_the_userinfo() -> None:
    assert redact("redis://user:p@ss@cache:6379/0") == "redis://***@cache:6379/0"
    assert redact("redis://us@er:pw@cache:6379/0") == "redis://***@cache:6379/0"
    assert redact("unix://:p@ss@/run/valkey.sock?db=0") == "unix://***@/run/valkey.sock?db=0"


@pytest.mark.parametrize(
    "url",
    [
        "redis://:pa/SECRET@cache:6379/0",
        "redis://:pa?SECRET@cache:6379",
        "redis://:pa#SECRET@cache",
    ],
)
def test_redact_hides_a_password_the_client_would_read_cut_short(url: str) -> None:
    """An unescaped '/', '?' or '#' ends urlparse's netloc: the client reads the password's
    first part, and the rest must not show either."""
    out = redact(url)
    assert "pa" not in out and "SECRET" not in out, out
    assert out.startswith("redis://***@cache"), out


def test_redact_hides_query_passwords_as_the_client_parses_them() -> None:
    # parse_qs decodes the name, and its value runs to the next '&'.
    assert redact("unix:///run/v.sock?pass%77ord=hunter2") == "unix:///run/v.sock?pass%77ord=***"
    url = "redis://cache/0?db=1&password=p@ss&w=rd&password=again"
    assert redact(url) == "redis://cache/0?db=1&password=***&w=rd&password=***"
    assert redact("redis://cache/0?password=a#b") == "redis://cache/0?password=***"
    assert redact("redis://u:x@cache/0?password=y") == "redis://***@cache/0?password=***"
    assert redact("redis://cache:6379/0?db=1") == "redis://cache:6379/0?db=1"


def test_has_password_sees_every_form() -> None:
    from dragoman.service.cache_store import has_password

    assert has_password("redis://user:p@ss@cache:6379/0")
    assert has_password("unix:///run/v.sock?password=x")
    assert not has_password("redis://cache:6379/0")
    assert not has_password("unix:///run/valkey.sock?db=0")
    assert not has_password(None)


async def test_a_value_round_trips_with_a_ttl_under_a_hashed_key(
    store: Store, raw: Redis, metrics: Metrics
) -> None:
    shared = SharedStore(store.url, 3600, metrics)
    try:
        assert await shared.get(KEY) is None
        assert sample(metrics, "cache_misses_total", level="shared") == 1
        shared.put(KEY, "Bonjour le monde.")

        async def stored() -> bool:
            return await shared.get(KEY) is not None

        await eventually(stored)
        assert await shared.get(KEY) == "Bonjour le monde."
        assert sample(metrics, "cache_hits_total", level="shared") >= 2
        assert [k.decode() async for k in raw.scan_iter()] == [PREFIX + KEY.hex()]
        assert 0 < await raw.ttl(PREFIX + KEY.hex()) <= 3600
        assert sample(metrics, "cache_store_errors_total", kind="get") == 0
    finally:
        await shared.aclose()


async def test_more_calls_at_once_than_connections_wait_their_turn(
    store: Store, raw: Redis, metrics: Metrics
) -> None:
    # Past the client's pool of 100 connections a call failed as if the store were down, and
    # a healthy store was left alone while a busy server's lookups all missed.
    shared = SharedStore(store.url, 60, metrics, timeout=30.0)  # no call is slow here
    try:
        keys = [i.to_bytes(16, "big") for i in range(300)]
        for key in keys:
            shared.put(key, f"text {key.hex()}")

        async def written() -> bool:
            return len(await raw.keys(PREFIX + "*")) == len(keys)

        await eventually(written)
        assert await asyncio.gather(*map(shared.get, keys)) == [f"text {k.hex()}" for k in keys]
        assert sample(metrics, "cache_store_errors_total", kind="set") == 0
        assert sample(metrics, "cache_store_errors_total", kind="get") == 0
        assert len(await raw.client_list()) <= 64 + 1  # this test's own client too
    finally:
        await shared.aclose()


async def test_connections_the_store_dropped_are_made_again_without_a_failure(
    store: Store, raw: Redis, metrics: Metrics
) -> None:
    # What a restart, the store's idle timeout or a NAT leaves in the pool: the first call on
    # such a connection failed, and a healthy store was left alone for 5 s.
    shared = SharedStore(store.url, 60, metrics, timeout=30.0)  # no call is slow here
    try:
        await raw.set(PREFIX + KEY.hex(), encode(KEY, "Bonjour."))
        assert await asyncio.gather(*(shared.get(KEY) for _ in range(8))) == ["Bonjour."] * 8
        await raw.execute_command("CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes")
        assert await asyncio.gather(*(shared.get(KEY) for _ in range(8))) == ["Bonjour."] * 8
        assert sample(metrics, "cache_store_errors_total", kind="get") == 0
    finally:
        await shared.aclose()


async def test_a_corrupt_or_foreign_value_is_a_counted_miss(
    store: Store, raw: Redis, metrics: Metrics
) -> None:
    shared = SharedStore(store.url, 60, metrics)
    try:
        await raw.set(PREFIX + KEY.hex(), b"not a dragoman value")
        assert await shared.get(KEY) is None
        other = bytes(16)
        await raw.set(PREFIX + other.hex(), encode(KEY, "for another key"))
        assert await shared.get(other) is None
        listed = bytes([1] * 16)
        await raw.rpush(PREFIX + listed.hex(), b"x")  # a list: the store refuses GET on it
        assert await shared.get(listed) is None
        assert sample(metrics, "cache_store_errors_total", kind="invalid") == 2
        assert sample(metrics, "cache_misses_total", level="shared") == 3
        assert sample(metrics, "cache_store_errors_total", kind="get") == 1  # WRONGTYPE
        # The store answered: it is not left alone, the next lookup reaches it.
        await raw.set(PREFIX + KEY.hex(), encode(KEY, "Salut."))
        assert await shared.get(KEY) == "Salut."
    finally:
        await shared.aclose()


async def test_a_store_that_is_down_fails_open_logs_once_and_is_tried_again(
    tmp_path_factory: pytest.TempPathFactory,
    metrics: Metrics,
    caplog: pytest.LogCaptureFixture,
) -> None:
    port = free_port()  # nothing listens there
    shared = SharedStore(f"redis://127.0.0.1:{port}/0", 60, metrics, retry_seconds=0.2)
    caplog.set_level(logging.INFO, logger="dragoman.service.cache_store")
    try:
        assert await shared.get(KEY) is None
        assert sample(metrics, "cache_store_errors_total", kind="get") == 1
        # Resting: a miss at once, no new attempt, no new error.
        assert await shared.get(KEY) is None
        shared.put(KEY, "dropped")
        assert sample(metrics, "cache_store_errors_total", kind="get") == 1
        # Each lookup it did not answer is a miss: hits and misses add up to the lookups (an
        # outage's lookups were in neither).
        assert sample(metrics, "cache_misses_total", level="shared") == 2

        async def tried_again() -> bool:
            await shared.get(KEY)
            return sample(metrics, "cache_store_errors_total", kind="get") >= 2

        await eventually(tried_again)
        warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
        assert len(warnings) == 1
        assert f"127.0.0.1:{port}" in warnings[0].getMessage()
        # The store comes up on that port: after the rest it answers again.
        up = start_store(tmp_path_factory.mktemp("late"), port=port)
        try:

            async def answers() -> bool:
                await shared.get(KEY)
                return any("answers again" in r.getMessage() for r in caplog.records)

            await eventually(answers)
        finally:
            up.stop()
    finally:
        await shared.aclose()


async def test_a_silent_store_costs_a_lookup_at_most_the_timeout(metrics: Metrics) -> None:
    """A server that accepts and never answers: the lookup gives up after `timeout`."""
    held: list[asyncio.StreamWriter] = []

    async def mute(_reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        held.append(writer)

    server = await asyncio.start_server(mute, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    shared = SharedStore(f"redis://127.0.0.1:{port}/0", 60, metrics, timeout=0.1)
    try:
        loop = asyncio.get_running_loop()
        started = loop.time()
        assert await asyncio.wait_for(shared.get(KEY), 30) is None
        # Bounded by the timeout, not by the socket's default of seconds (generous for a
        # busy machine, far under the 5 s a client would otherwise wait).
        assert loop.time() - started < 3
        assert sample(metrics, "cache_store_errors_total", kind="get") == 1
        assert held, "the lookup reached the silent server"
    finally:
        await shared.aclose()
        for w in held:
            w.close()
        server.close()
        await server.wait_closed()
