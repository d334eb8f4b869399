"""A small fake engine for HTTP-layer unit tests only (features are proven on the real one)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, AsyncIterator
from contextlib import asynccontextmanager

from dragoman.engine.host_defaults import EnginePlan
from dragoman.engine.protocol import (
    ChatChunk,
    ChatFinish,
    ChatParams,
    Terms,
    Translation,
    chat_budget,
)
from dragoman.errors import ContextTooLong, EngineDead, EngineFailed, TextTooLong


class FakeTranslator:
    model_name = "fake"
    languages = ("en", "fr", "de", "zh")
    plans: dict[str, EnginePlan] = {}  # noqa: RUF012 (read only)

    def __init__(self, delay: float = 0.0, max_words: int = 1000) -> None:
        self.delay = delay
        self.max_words = max_words
        self.running = 0
        self.peak = 0  # the most translations running at once
        self.started = 0
        self.cancelled = 0
        self.dead = False
        # Set: translations wait for it instead of `delay` (a test says when they finish).
        self.gate: asyncio.Event | None = None
        # Chat: the reply (else the last user message), a word a token, `delay` before each;
        # `chat_fail_after` words, then EngineFailed.
        self.chat_reply: str | None = None
        self.chat_fail_after: int | None = None
        self.chat_params: ChatParams | None = None

    async def translate(
        self, text: str, source: str, target: str, terms: Terms = ()
    ) -> Translation:
        if self.dead:
            raise EngineDead("the engine has stopped")
        if len(text.split()) > self.max_words:
            raise TextTooLong("text is too long for the fake model")
        self.running += 1
        self.peak = max(self.peak, self.running)
        self.started += 1
        try:
            await (self.gate.wait() if self.gate is not None else asyncio.sleep(self.delay))
        except asyncio.CancelledError:
            self.cancelled += 1
            raise
        finally:
            self.running -= 1
        words = len(text.split())
        for term, wanted in terms:  # a model that honours the glossary
            text = text.replace(term, wanted)
        return Translation(f"[{target}] {text}", "stop", words + 10, words, 0.001, 0.01)

    def model_for(self, source: str, target: str) -> str:
        return self.model_name

    def chat_models(self) -> dict[str, str]:
        return {self.model_name: "/models/fake"}

    async def chat(
        self, model: str, messages: list[dict[str, str]], params: ChatParams
    ) -> AsyncGenerator[ChatChunk, None]:
        if self.dead:
            raise EngineDead("the engine has stopped")
        prompt = sum(len(m["content"].split()) for m in messages)
        if prompt > self.max_words:
            raise ContextTooLong(f"the messages are {prompt} tokens; the fake's context is less")
        self.chat_params = params
        yield ChatChunk("", prompt)
        last = next((m["content"] for m in reversed(messages) if m["role"] == "user"), "")
        words = (self.chat_reply if self.chat_reply is not None else last).split()
        kept = words[: chat_budget(params, None, len(words))]
        finish: ChatFinish = "length" if len(kept) < len(words) else "stop"
        self.running += 1
        self.started += 1
        try:
            if not kept:
                yield ChatChunk("", prompt, 0, finish)
            for i, word in enumerate(kept):
                await asyncio.sleep(self.delay)
                if i == self.chat_fail_after:
                    raise EngineFailed("the fake engine failed mid-answer")
                end = finish if i == len(kept) - 1 else None
                yield ChatChunk(word if i == 0 else f" {word}", prompt, i + 1, end)
        except (asyncio.CancelledError, GeneratorExit):
            self.cancelled += 1
            raise
        finally:
            self.running -= 1

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
