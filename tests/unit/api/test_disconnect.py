"""cancel_on_disconnect: work that never waits is answered without a watcher; work that waits
is cancelled when its client goes away."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from dragoman.api._disconnect import cancel_on_disconnect
from dragoman.errors import ClientClosed


class _Request:
    """What cancel_on_disconnect reads of a request: its receive channel."""

    def __init__(self, disconnect: asyncio.Event) -> None:
        self.reads = 0
        self._disconnect = disconnect

    async def receive(self) -> dict[str, Any]:
        self.reads += 1
        await self._disconnect.wait()
        return {"type": "http.disconnect"}


async def _at_once() -> str:
    return "cached"


async def _failing() -> str:
    raise ValueError("refused")


async def test_work_done_in_its_first_step_needs_no_watcher() -> None:
    request = _Request(asyncio.Event())
    assert await cancel_on_disconnect(request, _at_once()) == "cached"  # type: ignore[arg-type]
    assert request.reads == 0  # no task ever listened for a disconnect


async def test_an_error_in_the_first_step_is_raised() -> None:
    with pytest.raises(ValueError, match="refused"):
        await cancel_on_disconnect(_Request(asyncio.Event()), _failing())  # type: ignore[arg-type]


async def test_work_that_waits_is_cancelled_when_the_client_leaves() -> None:
    disconnect = asyncio.Event()
    started, cancelled = asyncio.Event(), asyncio.Event()

    async def slow() -> str:
        started.set()
        try:
            await asyncio.Event().wait()  # never set: only a cancellation ends it
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return "never"

    request = _Request(disconnect)
    call = asyncio.ensure_future(cancel_on_disconnect(request, slow()))  # type: ignore[arg-type]
    await asyncio.wait_for(started.wait(), 5)
    disconnect.set()
    with pytest.raises(ClientClosed):
        await asyncio.wait_for(call, 5)
    assert cancelled.is_set() and request.reads == 1


async def test_work_that_waits_returns_its_result() -> None:
    async def later() -> str:
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        return "translated"

    request = _Request(asyncio.Event())
    assert await cancel_on_disconnect(request, later()) == "translated"  # type: ignore[arg-type]
