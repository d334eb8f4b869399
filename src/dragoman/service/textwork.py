"""Where a request's text work runs (letters, markup, the cut into units, putting the replies
back): on the event loop for a short request, in a thread past `CUT_IN_THREAD` characters,
each distinct unit once."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")

CUT_IN_THREAD = 2_000
"""Characters of a request past which its text work runs in a thread: a few milliseconds of
it on the event loop at most. Past it the loop gets the interpreter back at each switch
interval, as no step of the work holds it long (every pattern is linear; `dragoman bench
--hostile`)."""


async def run(chars: int, fn: Callable[[], T]) -> T:
    """A piece of the text work of a request of `chars` characters: in a thread past
    `CUT_IN_THREAD`, else here, on the loop."""
    if chars > CUT_IN_THREAD:
        return await asyncio.to_thread(fn)
    return fn()


def each_once(fn: Callable[[str], bool], units: list[str]) -> list[bool]:
    """`fn` of each unit, a repeated unit asked once (a text of one short sentence over and
    over is thousands of the same unit)."""
    seen: dict[str, bool] = {}
    out = []
    for u in units:
        found = seen.get(u)
        if found is None:
            found = seen[u] = fn(u)
        out.append(found)
    return out
