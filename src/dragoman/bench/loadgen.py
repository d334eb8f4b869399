"""Closed-loop and open-loop (Poisson) load, one record per request. A failed request is a
record with success=False and its error; it never stops the run. Every level is bounded in
request count and in time."""

from __future__ import annotations

import asyncio
import itertools
import random
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass

import httpx

from dragoman.bench.targets import Reply, Target
from dragoman.eval.workloads import Item


@dataclass
class Record:
    index: int
    success: bool
    status: int | None
    error: str | None
    start: float  # seconds since the level started
    latency: float
    input_tokens: int
    output_tokens: int
    queue_seconds: float | None
    inference_seconds: float | None
    target_lang: str
    approx_tokens: int

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def client_for(concurrency: int, timeout: float = 300.0) -> httpx.AsyncClient:
    # Pooled keep-alive connections, at least one per concurrent worker.
    limits = httpx.Limits(max_connections=max(concurrency, 1) + 4, max_keepalive_connections=None)
    return httpx.AsyncClient(timeout=timeout, limits=limits)


async def _one(
    client: httpx.AsyncClient, target: Target, item: Item, index: int, t0: float
) -> Record:
    started = time.perf_counter()
    try:
        reply = await target.send(client, item)
    except (httpx.HTTPError, ValueError, KeyError) as exc:
        reply = Reply(status=0, error=f"{type(exc).__name__}: {exc}"[:300])
    latency = time.perf_counter() - started
    return Record(
        index=index,
        success=reply.status == 200 and reply.error is None,
        status=reply.status or None,
        error=reply.error,
        start=started - t0,
        latency=latency,
        input_tokens=reply.input_tokens,
        output_tokens=reply.output_tokens,
        queue_seconds=reply.queue_seconds,
        inference_seconds=reply.inference_seconds,
        target_lang=item.target,
        approx_tokens=item.approx_tokens,
    )


def _from(items: Sequence[Item], first: int) -> Iterator[Item]:
    """The items cycled without end, starting at the `first`-th."""
    return itertools.islice(itertools.cycle(items), first % len(items) if items else 0, None)


async def closed_loop(
    target: Target,
    items: Sequence[Item],
    concurrency: int,
    max_requests: int,
    max_seconds: float,
    on_record: Callable[[Record], None] | None = None,
    first: int = 0,
) -> list[Record]:
    """`concurrency` clients, each sending its next request as soon as the last is answered.
    Items are taken in order from the `first`-th on (cycled); a record's index is its place
    in that sequence."""
    source: Iterator[tuple[int, Item]] = enumerate(_from(items, first), first)
    records: list[Record] = []
    t0 = time.perf_counter()
    deadline = t0 + max_seconds

    async def worker(client: httpx.AsyncClient) -> None:
        while len(records) + busy[0] < max_requests and time.perf_counter() < deadline:
            index, item = next(source)
            busy[0] += 1
            try:
                record = await _one(client, target, item, index, t0)
            finally:
                busy[0] -= 1
            records.append(record)
            if on_record is not None:
                on_record(record)

    busy = [0]
    async with client_for(concurrency) as client:
        await asyncio.gather(*(worker(client) for _ in range(concurrency)))
    return records


async def open_loop(
    target: Target,
    items: Sequence[Item],
    rate: float,
    max_requests: int,
    max_seconds: float,
    seed: int = 0,
    on_record: Callable[[Record], None] | None = None,
    first: int = 0,
) -> list[Record]:
    """Poisson arrivals at `rate` requests/s, whatever the server's pace (as real users come);
    items from the `first`-th on, as closed_loop takes them."""
    rng = random.Random(seed)
    records: list[Record] = []
    t0 = time.perf_counter()
    tasks: list[asyncio.Task[None]] = []

    async def send(client: httpx.AsyncClient, index: int, item: Item) -> None:
        record = await _one(client, target, item, index, t0)
        records.append(record)
        if on_record is not None:
            on_record(record)

    async with client_for(min(max_requests, 256)) as client:
        next_at = 0.0
        sequence = zip(range(first, first + max_requests), _from(items, first), strict=False)
        for index, item in sequence:
            next_at += rng.expovariate(rate)
            if next_at > max_seconds:
                break
            await asyncio.sleep(max(0.0, t0 + next_at - time.perf_counter()))
            tasks.append(asyncio.create_task(send(client, index, item)))
        await asyncio.gather(*tasks)
    return records
