"""A small fake engine for HTTP-layer unit tests only (features are proven on the real one)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from dragoman.engine.plan import EnginePlan
from dragoman.engine.protocol import Translation
from dragoman.errors import EngineDead, TextTooLong


class FakeTranslator:
    model_name = "fake"
    languages = ("en", "fr", "de", "zh")
    plans: dict[str, EnginePlan] = {}  # noqa: RUF012 (read only)

    def __init__(self, delay: float = 0.0, max_words: int = 1000) -> None:
        self.delay = delay
        self.max_words = max_words
        self.running = 0
        self.started = 0
        self.cancelled = 0
        self.dead = False

    async def translate(self, text: str, source: str, target: str) -> Translation:
        if self.dead:
            raise EngineDead("the engine has stopped")
        if len(text.split()) > self.max_words:
            raise TextTooLong("text is too long for the fake model")
        self.running += 1
        self.started += 1
        try:
            await asyncio.sleep(self.delay)
        except asyncio.CancelledError:
            self.cancelled += 1
            raise
        finally:
            self.running -= 1
        words = len(text.split())
        return Translation(f"[{target}] {text}", "stop", words + 10, words, 0.001, 0.01)

    def model_for(self, source: str, target: str) -> str:
        return self.model_name

    async def check_health(self) -> None:
        if self.dead:
            raise EngineDead("the engine has stopped")

    def num_unfinished_requests(self) -> int:
        return self.running


def factory_for(translator: FakeTranslator, load_delay: float = 0.0):  # type: ignore[no-untyped-def]
    @asynccontextmanager
    async def factory() -> AsyncIterator[FakeTranslator]:
        await asyncio.sleep(load_delay)
        yield translator

    return factory
