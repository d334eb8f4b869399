"""Coalescing: identical work in flight is done once; it is aborted only when nobody waits."""

from __future__ import annotations

import asyncio

import pytest

from dragoman.service.coalesce import Coalescer


class Work:
    def __init__(self) -> None:
        self.started = 0
        self.cancelled = 0
        self.release = asyncio.Event()

    async def __call__(self) -> str:
        self.started += 1
        try:
            await self.release.wait()
        except asyncio.CancelledError:
            self.cancelled += 1
            raise
        return f"done {self.started}"


async def settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


async def test_identical_work_in_flight_runs_once() -> None:
    joined = []
    c: Coalescer[str] = Coalescer(lambda: joined.append(1))
    work = Work()
    tasks = [asyncio.create_task(c.run("k", work)) for _ in range(6)]
    await settle()
    assert work.started == 1 and len(joined) == 5
    work.release.set()
    assert await asyncio.gather(*tasks) == ["done 1"] * 6
    assert len(c) == 0
    # Once finished, the same key is new work again.
    assert await c.run("k", work) == "done 2"


async def test_different_keys_do_not_share() -> None:
    c: Coalescer[str] = Coalescer()
    work = Work()
    work.release.set()
    await asyncio.gather(c.run("a", work), c.run("b", work))
    assert work.started == 2


async def test_a_waiter_leaving_does_not_abort_the_others() -> None:
    c: Coalescer[str] = Coalescer()
    work = Work()
    first = asyncio.create_task(c.run("k", work))
    second = asyncio.create_task(c.run("k", work))
    await settle()
    first.cancel()
    await settle()
    assert first.cancelled() and work.cancelled == 0
    work.release.set()
    assert await second == "done 1"


async def test_the_work_is_aborted_when_every_waiter_left() -> None:
    c: Coalescer[str] = Coalescer()
    work = Work()
    tasks = [asyncio.create_task(c.run("k", work)) for _ in range(3)]
    await settle()
    for t in tasks:
        t.cancel()
    await settle()
    assert work.cancelled == 1 and len(c) == 0
    # A newcomer starts afresh rather than joining the aborted work.
    work.release.set()
    assert await c.run("k", work) == "done 2"


async def test_a_failure_reaches_every_waiter() -> None:
    c: Coalescer[str] = Coalescer()

    async def boom() -> str:
        await asyncio.sleep(0)
        raise ValueError("engine said no")

    results = await asyncio.gather(*(c.run("k", boom) for _ in range(3)), return_exceptions=True)
    assert all(isinstance(r, ValueError) for r in results)
    with pytest.raises(ValueError):
        await c.run("k", boom)
