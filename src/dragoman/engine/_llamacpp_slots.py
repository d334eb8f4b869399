"""Which llama-server slot a request runs in, so that the prompt prefix a slot holds is reused.

Every request of a language pair starts with the same tokens: the system prompt and the pair's
worked examples (engine/prompts.py), some 150-200 tokens. A slot keeps the last prompt it ran,
and `cache_prompt` computes only what follows the part it shares with the new one. llama-server
left to itself takes the idle slot most similar to the new prompt if any is 10% alike, and the
system prompt alone is that much: at one client it ran every pair in the same one or two slots,
each request computing its pair's examples again (the log showed 10-17% of a slot's prompt kept,
140-220 prompt tokens at 8-10 ms each on a 2-core AVX2 host: most of a short request's time).

So the translator names the slot (`id_slot`): an idle slot that last ran the same pair (of
those, the one whose last prompt shares most with this one: a text asked again, or a reply
asked again with a note, finds its own); else one never used; else the idle slot whose pair is
held by the most other slots (the last holder of a pair is kept), least recently used among
equals. A request holds its slot until its answer
is whole (a streamed tail continues in it), so the service knows which slots are busy; the slots
also bound how many requests are in llama-server at once, as the connection pool did.

A slot that held another pair gets the pair's prefix from a `PrefixBank` instead of computing
it: the first request of a pair computes the prefix alone in its slot (one token generated),
which llama-server saves to a file (`--slot-save-path`, about 1.6 MB for 132 tokens, 2 ms);
any other slot restores it in about 1 ms before its request, which then computes only its own
text (9 prompt tokens in 0.30 s against 141 in 1.40 s cold, same answer, 2-core AVX2 host).
Requests of a pair that arrive while its prefix is being computed (the sentences of one
document) wait for it rather than each computing it in a slot of its own. A bank that fails
(an older server without slot files) is switched off and requests compute their prefix.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
from collections import Counter
from collections.abc import AsyncIterator, Callable, Hashable, Sequence
from contextlib import asynccontextmanager
from typing import Any

import httpx

from dragoman.engine._llamacpp_process import error_message
from dragoman.engine.prompts import shared_length

log = logging.getLogger(__name__)

Pair = tuple[str, str]  # (source, target): what a prompt's prefix depends on


class SlotPicker:
    def __init__(self, slots: int) -> None:
        self._free = set(range(slots))
        self._keys: list[Hashable | None] = [None] * slots
        self._prompts: list[Sequence[int]] = [()] * slots
        self._last = [0] * slots
        self._clock = itertools.count(1)
        self._permits = asyncio.Semaphore(slots)

    def pick(self, key: Hashable, prompt: Sequence[int] = ()) -> int:
        """The idle slot for `prompt`, of `key` (at least one slot must be idle)."""
        same = [s for s in self._free if self._keys[s] == key]
        if same:
            return max(same, key=lambda s: (shared_length(self._prompts[s], prompt), self._last[s]))
        empty = [s for s in self._free if self._keys[s] is None]
        if empty:
            return min(empty)
        holders = Counter(self._keys)
        return max(self._free, key=lambda s: (holders[self._keys[s]], -self._last[s]))

    @asynccontextmanager
    async def hold(self, key: Hashable, prompt: Sequence[int] = ()) -> AsyncIterator[int]:
        """A slot for one request of `key`, waiting (first come, first served) while all are
        busy; it holds `prompt` once released."""
        async with self._permits:
            slot = self.pick(key, prompt)
            self._free.remove(slot)
            try:
                yield slot
            finally:
                self._keys[slot], self._prompts[slot] = key, prompt
                self._last[slot] = next(self._clock)
                self._free.add(slot)

    def key_of(self, slot: int) -> Hashable | None:
        """The key of the last request that ran in `slot` (None: never used)."""
        return self._keys[slot]

    def busy(self) -> int:
        return len(self._keys) - len(self._free)


class PrefixBank:
    """Each key's prompt prefix, computed once in a slot and saved by llama-server, restored
    into any other slot that needs it."""

    def __init__(
        self, client: httpx.AsyncClient, prefix: Callable[[Pair], list[int]], enabled: bool
    ) -> None:
        self._client = client
        self._prefix = prefix
        self.enabled = enabled
        self._saved: dict[Pair, str] = {}
        self._computing: dict[Pair, asyncio.Event] = {}
        self._names = itertools.count()
        self.computed = self.restored = 0  # prefixes computed alone and saved; restores

    async def load(self, key: Pair, slot: int) -> None:
        """Make `slot` (held by the caller, idle in llama-server) start with `key`'s prefix."""
        while self.enabled:
            name = self._saved.get(key)
            if name is not None:
                restored = await self._action(slot, "restore", name)
                self.restored += restored  # counted after the await: restores run at once
                return
            computing = self._computing.get(key)
            if computing is None:
                await self._compute(key, slot)
                return
            await computing.wait()  # then restore what it saved, or compute it if it failed

    async def _compute(self, key: Pair, slot: int) -> None:
        done = self._computing[key] = asyncio.Event()
        try:
            body = {
                "prompt": self._prefix(key),
                "n_predict": 1,
                "temperature": 0.0,
                "cache_prompt": True,
                "id_slot": slot,
            }
            r = await self._client.post("/completion", json=body)
            if r.status_code != 200:
                self._off(f"computing a prefix answered {r.status_code}: {error_message(r)}")
                return
            name = f"prefix-{next(self._names)}.bin"
            if await self._action(slot, "save", name):
                self._saved[key] = name
                self.computed += 1
        finally:
            del self._computing[key]
            done.set()

    async def _action(self, slot: int, action: str, name: str) -> bool:
        body = {"filename": name}
        r = await self._client.post(f"/slots/{slot}", params={"action": action}, json=body)
        if r.status_code == 200:
            return True  # llama-server defers an action on a busy slot until it is idle
        self._off(f"slot {action} answered {r.status_code}: {error_message(r)}")
        return False

    def _off(self, why: str) -> None:
        if self.enabled:
            log.warning("prompt prefixes are computed in each slot: %s", why)
        self.enabled = False


def slot_seconds(answer: dict[str, Any]) -> float | None:
    """Prompt and decode time of an answer in its slot, from llama-server's timings."""
    timings = answer.get("timings") or {}
    if "predicted_ms" not in timings:
        return None
    return float(timings.get("prompt_ms", 0.0) + timings["predicted_ms"]) / 1e3


def slot_client(url: str, slots: int, headers: dict[str, str] | None = None) -> httpx.AsyncClient:
    """A connection per slot (requests past the slots wait for one in the translator's
    SlotPicker, not in llama-server's HTTP queue), without timeouts past the connect:
    deadlines are the service's, which cancels. `headers` (the server's key) go with every
    request."""
    limits = httpx.Limits(max_connections=slots + 1)
    timeout = httpx.Timeout(10.0, read=None, pool=None)
    return httpx.AsyncClient(base_url=url, limits=limits, timeout=timeout, headers=headers)
