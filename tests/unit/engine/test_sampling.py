from __future__ import annotations

import asyncio

import pytest

from dragoman.engine.protocol import Translation
from dragoman.engine.sampling import gather
from dragoman.errors import EngineFailed
from tests.unit.api.conftest import wait_for


def _t(text: str) -> Translation:
    return Translation(text, "stop", 1, 1, 0.0, 0.0)


class Scripted:
    """Replies that finish when the test says: `release(name)`."""

    def __init__(self) -> None:
        self.gates: dict[str, asyncio.Event] = {}
        self.started: list[str] = []
        self.cancelled: list[str] = []
        self.finished: list[str] = []
        self.prefilled: asyncio.Event | None = None

    def gate(self, name: str) -> asyncio.Event:
        return self.gates.setdefault(name, asyncio.Event())

    async def reply(self, name: str) -> Translation:
        self.started.append(name)
        try:
            await self.gate(name).wait()
        except asyncio.CancelledError:
            self.cancelled.append(name)
            raise
        self.finished.append(name)
        if name == "fails":
            raise EngineFailed("no")
        return _t(name)

    async def greedy(self, prefilled: asyncio.Event | None) -> Translation:
        self.prefilled = prefilled
        return await self.reply("greedy")

    async def sample(self, seed: int) -> Translation:
        return await self.reply(f"s{seed}")


async def test_samples_start_once_the_greedy_prompt_is_in_and_all_are_kept() -> None:
    s = Scripted()
    task = asyncio.ensure_future(gather(s.greedy, s.sample, 3, None, staged=True))
    await wait_for(lambda: s.prefilled is not None)
    assert s.started == ["greedy"]  # the samples wait for its first token
    assert s.prefilled is not None
    s.prefilled.set()
    await wait_for(lambda: len(s.started) == 3)
    for name in ("greedy", "s2", "s1"):
        s.gate(name).set()
    assert [t.text for t in await task] == ["greedy", "s1", "s2"]


async def test_with_patience_a_late_sample_is_cancelled_and_left_out() -> None:
    s = Scripted()
    task = asyncio.ensure_future(gather(s.greedy, s.sample, 3, 0.0, staged=False))
    await wait_for(lambda: len(s.started) == 3)
    s.gate("s1").set()
    await wait_for(lambda: "s1" in s.finished)  # before the greedy one
    s.gate("greedy").set()
    out = await task
    assert [t.text for t in out] == ["greedy", "s1"]
    assert s.cancelled == ["s2"]  # its engine request aborted


async def test_an_error_cancels_the_others_and_is_raised() -> None:
    s = Scripted()

    async def sample(seed: int) -> Translation:
        return await s.reply("fails" if seed == 1 else f"s{seed}")

    task = asyncio.ensure_future(gather(s.greedy, sample, 3, None, staged=False))
    await wait_for(lambda: len(s.started) == 3)
    s.gate("greedy").set()
    s.gate("fails").set()
    with pytest.raises(EngineFailed):
        await task
    assert s.cancelled == ["s2"]
