"""Coalescing: identical translations in flight (same model, pair and text) share one engine
request. A client that re-sends after a timeout (the `deepl` client does, up to five times)
joins the first attempt instead of multiplying the work. The shared request is aborted only
when every request waiting on it has gone."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Awaitable, Callable, Hashable
from typing import Generic, TypeVar

T = TypeVar("T")


class _Shared(Generic[T]):
    def __init__(self, task: asyncio.Task[T]) -> None:
        self.task = task
        self.waiters = 0


class Coalescer(Generic[T]):
    def __init__(self, on_join: Callable[[], None] = lambda: None) -> None:
        self._on_join = on_join
        self._inflight: dict[Hashable, _Shared[T]] = {}

    def __len__(self) -> int:
        return len(self._inflight)

    async def run(self, key: Hashable, make: Callable[[], Awaitable[T]]) -> T:
        shared = self._inflight.get(key)
        if shared is None:
            shared = _Shared(asyncio.ensure_future(make()))
            self._inflight[key] = shared
            shared.task.add_done_callback(functools.partial(self._done, key, shared))
        else:
            self._on_join()
        shared.waiters += 1
        try:
            return await asyncio.shield(shared.task)
        except asyncio.CancelledError:
            if not shared.task.done():  # this waiter was cancelled, not the shared work
                shared.waiters -= 1
                if shared.waiters == 0:
                    # Nobody waits any more: forget it first (a newcomer starts afresh), abort.
                    self._forget(key, shared)
                    shared.task.cancel()
            raise

    def _forget(self, key: Hashable, shared: _Shared[T]) -> None:
        if self._inflight.get(key) is shared:
            del self._inflight[key]

    def _done(self, key: Hashable, shared: _Shared[T], task: asyncio.Task[T]) -> None:
        self._forget(key, shared)
        if not task.cancelled():
            task.exception()  # retrieved: each waiter got it already, or nobody waits
