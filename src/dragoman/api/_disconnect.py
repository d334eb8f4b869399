"""Tie a handler's work to its client: when the client goes away, the work is cancelled, and
cancelling an engine request aborts it inside vLLM (as vLLM's own server does)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterable, Awaitable, Callable, Coroutine
from typing import Any, TypeVar

from fastapi import Request
from starlette.responses import StreamingResponse
from starlette.types import Receive, Scope, Send

from dragoman.errors import ClientClosed

T = TypeVar("T")


async def _wait_for_disconnect(receive: Receive) -> None:
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return


async def cancel_on_disconnect(request: Request, work: Coroutine[Any, Any, T]) -> T:
    task = asyncio.ensure_future(work)
    # The task's first step runs before this one resumes: work that never waits (a cache
    # hit, a refusal) is done by then and needs no watcher (two tasks fewer per request).
    await asyncio.sleep(0)
    if task.done():
        return task.result()
    watcher = asyncio.ensure_future(_wait_for_disconnect(request.receive))
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


class EventStream(StreamingResponse):
    """Server-sent events tied to their client: a disconnect cancels the stream (aborting its
    engine work) whatever ASGI version the server speaks (Starlette stops listening for it
    from 2.4 on, noticing only at the next write). `on_close` runs however the response ends,
    even when the stream never started (its own `finally` would not run then)."""

    media_type = "text/event-stream"

    def __init__(
        self, content: AsyncIterable[bytes], on_close: Callable[[], Awaitable[None]]
    ) -> None:
        super().__init__(content, headers={"Cache-Control": "no-cache"})
        self._on_close = on_close

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        stream = asyncio.ensure_future(self.stream_response(send))
        watcher = asyncio.ensure_future(_wait_for_disconnect(receive))
        try:
            await asyncio.wait({stream, watcher}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for t in (stream, watcher):
                if not t.done():
                    t.cancel()
            await asyncio.gather(stream, watcher, return_exceptions=True)
            await self._on_close()
        if not stream.cancelled():
            with contextlib.suppress(OSError):  # the client went away mid-write
                stream.result()
