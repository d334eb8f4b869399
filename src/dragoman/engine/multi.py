"""Several models in one server, each its own vLLM async engine in this process, and a map
from language pairs to models. Prompt format is part of each model's entry."""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager

from dragoman.engine.protocol import (
    ChatChunk,
    ChatEngine,
    ChatParams,
    Terms,
    Translation,
    Translator,
)
from dragoman.errors import ModelNotFound, UnsupportedLanguage

Pair = tuple[str, str]


class MultiTranslator:
    def __init__(self, translators: dict[str, Translator], routes: dict[Pair, str]) -> None:
        self.translators = translators
        self.routes = routes
        self.model_name = "+".join(translators)
        self.languages = tuple(sorted({code for pair in routes for code in pair}))
        self.plans = {k: v for t in translators.values() for k, v in t.plans.items()}

    @property
    def pairs(self) -> dict[Pair, str]:
        return dict(self.routes)

    async def translate(
        self, text: str, source: str, target: str, terms: Terms = ()
    ) -> Translation:
        name = self.routes.get((source, target))
        if name is None:
            raise UnsupportedLanguage(f"no model on this server translates {source}->{target}")
        return await self.translators[name].translate(text, source, target, terms)

    def model_for(self, source: str, target: str) -> str:
        return self.routes.get((source, target), self.model_name)

    def chat_models(self) -> dict[str, str]:
        return {
            name: root
            for t in self.translators.values()
            if isinstance(t, ChatEngine)
            for name, root in t.chat_models().items()
        }

    def chat(
        self, model: str, messages: list[dict[str, str]], params: ChatParams
    ) -> AsyncGenerator[ChatChunk, None]:
        translator = self.translators.get(model)
        if not isinstance(translator, ChatEngine):
            raise ModelNotFound(f"no model named {model!r} on this server")
        return translator.chat(model, messages, params)

    async def check_health(self) -> None:
        for translator in self.translators.values():
            await translator.check_health()

    def num_unfinished_requests(self) -> int:
        return sum(t.num_unfinished_requests() for t in self.translators.values())


@asynccontextmanager
async def open_multi(settings: object) -> AsyncIterator[MultiTranslator]:
    """One engine per `[[models]]` entry of the server's settings, all shut down together."""
    from dragoman.engine.vllm_engine import open_vllm
    from dragoman.settings import ServeSettings

    assert isinstance(settings, ServeSettings)
    routes = settings.model_routes()
    async with AsyncExitStack() as stack:
        translators: dict[str, Translator] = {}
        for i, spec in enumerate(settings.models):
            engine_settings = settings.model_copy(update={"model": spec.model})
            languages = tuple(
                sorted({c for pair, n in routes.items() if n == spec.name for c in pair})
            )
            translators[spec.name] = await stack.enter_async_context(
                open_vllm(
                    engine_settings,
                    languages,
                    spec.prompt_format(),
                    spec.name,
                    prometheus=i == 0,
                )
            )
        yield MultiTranslator(translators, routes)
