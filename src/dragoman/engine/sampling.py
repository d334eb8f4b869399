"""How an engine makes a text's candidates (service/candidates.py picks among them): the
greedy reply first, then the sampled ones, started once the greedy one's prompt is computed
where the engine caches prompts (they share it rather than each computing it in the same
step); with `patience`, only the samples done by a little after the greedy one are kept, so
a sample that runs longer does not hold the answer."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable

from dragoman.engine.protocol import Translation


async def gather(
    greedy: Callable[[asyncio.Event | None], Awaitable[Translation]],
    sample: Callable[[int], Awaitable[Translation]],
    k: int,
    patience: float | None,
    staged: bool,
) -> list[Translation]:
    """The greedy reply (`greedy(prefilled)`, which sets `prefilled` at its first token) and
    the samples of seeds 1..k-1 (`sample(seed)`). `staged`: the samples start once the greedy
    one is prefilled, else at once. `patience` None: every sample; else the samples finished
    by the greedy one's time times 1 + `patience`, the others cancelled (their engine requests
    aborted) and left out. An error of any is raised, the others cancelled."""
    started = time.monotonic()
    prefilled = asyncio.Event() if staged else None
    first = asyncio.ensure_future(greedy(prefilled))
    tasks: list[asyncio.Future[Translation]] = [first]
    try:
        if prefilled is not None:
            waiting = asyncio.ensure_future(prefilled.wait())
            await asyncio.wait((first, waiting), return_when=asyncio.FIRST_COMPLETED)
            waiting.cancel()
        samples = [asyncio.ensure_future(sample(seed)) for seed in range(1, k)]
        tasks += samples
        chosen = await first
        if not samples:
            return [chosen]
        if patience is None:
            return [chosen, *await asyncio.gather(*samples)]
        budget = (time.monotonic() - started) * patience
        done, _ = await asyncio.wait(samples, timeout=budget)
        return [chosen, *(s.result() for s in samples if s in done)]
    finally:
        late = [t for t in tasks if not t.done()]
        for t in late:
            t.cancel()
        await asyncio.gather(*late, return_exceptions=True)
