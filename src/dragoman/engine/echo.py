"""`--architecture echo`: answers with the text itself after a fixed delay, with no model. For
measuring HTTP and proxy overhead, and as a cheap backend in routing tests. Never a translator.
Chat echoes the last user message, a word a token, after the same delay."""

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


class EchoTranslator:
    def __init__(self, name: str, languages: tuple[str, ...], delay: float) -> None:
        self.model_name = name
        self.languages = languages
        self.delay = delay
        self.plans: dict[str, EnginePlan] = {}
        self._running = 0

    async def translate(
        self, text: str, source: str, target: str, terms: Terms = ()
    ) -> Translation:
        self._running += 1
        try:
            await asyncio.sleep(self.delay)
        finally:
            self._running -= 1
        words = len(text.split())
        return Translation(text, "stop", words, words, 0.0, self.delay)

    def model_for(self, source: str, target: str) -> str:
        return self.model_name

    def chat_models(self) -> dict[str, str]:
        return {self.model_name: self.model_name}

    async def chat(
        self, model: str, messages: list[dict[str, str]], params: ChatParams
    ) -> AsyncGenerator[ChatChunk, None]:
        prompt = sum(len(m["content"].split()) for m in messages)
        yield ChatChunk("", prompt)
        last = next((m["content"] for m in reversed(messages) if m["role"] == "user"), "")
        words = last.split()
        kept = words[: chat_budget(params, None, len(words))]
        self._running += 1
        try:
            await asyncio.sleep(self.delay)
        finally:
            self._running -= 1
        finish: ChatFinish = "length" if len(kept) < len(words) else "stop"
        yield ChatChunk(" ".join(kept), prompt, len(kept), finish)

    async def check_health(self) -> None:
        return None

    def num_unfinished_requests(self) -> int:
        return self._running


@asynccontextmanager
async def open_echo(
    name: str, languages: tuple[str, ...], delay: float
) -> AsyncIterator[EchoTranslator]:
    yield EchoTranslator(name, languages, delay)
