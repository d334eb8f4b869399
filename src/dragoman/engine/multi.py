"""Several models in one server, each its own vLLM async engine in this process, and a map
from language pairs to models, in one or two quality tiers (a request's `quality` hint picks
the tier; without one, each pair has its default). Prompt format is part of each model's
entry."""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, AsyncExitStack, asynccontextmanager
from typing import TYPE_CHECKING

from dragoman.engine.protocol import (
    ChatChunk,
    ChatEngine,
    ChatParams,
    Quality,
    Terms,
    Translation,
    Translator,
)
from dragoman.errors import ModelNotFound, UnsupportedLanguage

if TYPE_CHECKING:  # the server's settings, a layer above: for their type only
    from dragoman.service.settings import ModelSpec, ServeSettings

Pair = tuple[str, str]


class MultiTranslator:
    def __init__(
        self,
        translators: dict[str, Translator],
        routes: dict[Pair, str],
        tiers: dict[Pair, dict[Quality, str]] | None = None,
        model_tiers: dict[str, Quality] | None = None,
    ) -> None:
        self.translators = translators
        self.routes = routes  # pair -> its default model
        self.tiers: dict[Pair, dict[Quality, str]] = tiers or {
            pair: {"fast": name} for pair, name in routes.items()
        }
        self.model_tiers: dict[str, Quality] = model_tiers or {}
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

    def choose(self, source: str, target: str, quality: Quality | None) -> Translator:
        """The hinted tier's model when it serves the pair, else the pair's default."""
        tiers = self.tiers.get((source, target))
        if tiers is None:
            raise UnsupportedLanguage(f"no model on this server translates {source}->{target}")
        name = tiers.get(quality) if quality else None
        return self.translators[name or self.routes[(source, target)]]

    def tier_of(self, model: str) -> Quality:
        return self.model_tiers.get(model, "fast")

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


# (entry, the languages it serves, whether it is the first) -> its translator's context
OpenOne = Callable[..., AbstractAsyncContextManager[Translator]]


@asynccontextmanager
async def open_multi(
    settings: ServeSettings, open_one: OpenOne | None = None
) -> AsyncIterator[MultiTranslator]:
    """One engine per `[[models]]` entry of the server's settings, all shut down together;
    `open_one(spec, languages, first)` opens one (default: a vLLM engine)."""

    def open_vllm_one(
        spec: ModelSpec, languages: tuple[str, ...], first: bool
    ) -> AbstractAsyncContextManager[Translator]:
        from dragoman.engine.vllm_engine import open_vllm

        engine_settings = settings.model_copy(update={"model": spec.model})
        return open_vllm(
            engine_settings, languages, spec.prompt_format(), spec.name, prometheus=first
        )

    opener = open_one or open_vllm_one
    tiers = settings.model_tiers()
    async with AsyncExitStack() as stack:
        translators: dict[str, Translator] = {}
        for i, spec in enumerate(settings.models):
            languages = tuple(sorted({c for pair in spec.pair_list() for c in pair}))
            translators[spec.name] = await stack.enter_async_context(
                opener(spec, languages, i == 0)
            )
        yield MultiTranslator(
            translators,
            settings.model_routes(),
            tiers,
            {spec.name: spec.quality_tier() for spec in settings.models},
        )
