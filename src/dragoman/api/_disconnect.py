"""Tie a handler's work to its client: when the client goes away, the work is cancelled, and
cancelling an engine request aborts it inside vLLM (as vLLM's own server does)."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, TypeVar

from fastapi import Request

from dragoman.errors import ClientClosed

T = TypeVar("T")


async def _wait_for_disconnect(request: Request) -> None:
    while True:
        message = await request.receive()
        if message["type"] == "http.disconnect":
            return


async def cancel_on_disconnect(request: Request, work: Coroutine[Any, Any, T]) -> T:
    task = asyncio.ensure_future(work)
    watcher = asyncio.ensure_future(_wait_for_disconnect(request))
    try:
        await asyncio.wait({task, watcher}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for t in (task, watcher):
            if not t.done():
                t.cancel()
        # Wait for the cancellations to land, so engine aborts happen before we answer.
        await asyncio.gather(task, watcher, return_exceptions=True)
    if task.cancelled():
        raise ClientClosed("client disconnected")
    return task.result()
