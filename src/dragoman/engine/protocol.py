"""What the API needs from an engine. The real one is `vllm_engine.VllmTranslator`; HTTP-layer
unit tests use a small fake with the same shape."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Literal, Protocol, TypeGuard, runtime_checkable

if TYPE_CHECKING:
    from dragoman.engine.host_defaults import EnginePlan

Terms = tuple[tuple[str, str], ...]
"""Glossary pairs for one text: (source term, target term)."""

FinishReason = Literal["stop", "length", "repetition", "unchanged"]

Quality = Literal["fast", "best"]
"""A quality tier: where a server hosts two models for a pair, the faster or the better one."""

ContextMode = Literal["off", "previous", "both"]
"""Which neighbours of a sentence of a longer text its prompt shows as context."""


@dataclass(frozen=True)
class Translation:
    text: str
    finish_reason: FinishReason
    input_tokens: int
    output_tokens: int
    queue_seconds: float
    inference_seconds: float
    cached: bool = False
    """Answered from the translation cache: its tokens are those the engine's answer had (a
    hit reports the usage a miss does), but no engine work was done for it."""
    logprob: float | None = None
    """The model's mean log-probability per output token, where the engine was asked for it
    (a candidate's: ties of the consensus pick are broken by it)."""
    candidates: int = 1
    """How many candidates the engine made for it (1: the greedy reply alone)."""
    alternatives: tuple[str, ...] = ()
    """The runners-up of the consensus pick, distinct, in pick order."""


def charged_both(kept: Translation, first: Translation, second: Translation) -> Translation:
    """`kept` (one of two replies asked for one text), charged with both requests' tokens and
    engine time."""
    return replace(
        kept,
        input_tokens=first.input_tokens + second.input_tokens,
        output_tokens=first.output_tokens + second.output_tokens,
        inference_seconds=first.inference_seconds + second.inference_seconds,
    )


class Translator(Protocol):
    model_name: str
    languages: tuple[str, ...]
    plans: dict[str, EnginePlan]
    """Each model's engine plan (what the host got and why); empty without a real engine."""

    async def translate(
        self, text: str, source: str, target: str, terms: Terms = ()
    ) -> Translation:
        """Translate one text; `terms` are glossary pairs (source term, target term) the text
        holds, which the prompt asks the model to use. Raises TextTooLong, EngineFailed or
        EngineDead."""
        ...

    async def check_health(self) -> None:
        """Raise EngineDead if the engine cannot answer."""
        ...

    def num_unfinished_requests(self) -> int: ...

    def model_for(self, source: str, target: str) -> str:
        """The model that translates this pair (several models share a server)."""
        ...


@runtime_checkable
class Sampler(Protocol):
    """A translator that can make several candidates of one text (service/candidates.py)."""

    async def candidates(
        self, text: str, source: str, target: str, terms: Terms, k: int, patience: float | None
    ) -> list[Translation]:
        """Up to `k` replies for one text, the greedy one first, then `k - 1` sampled ones
        (seeds 1..k-1), each with its `logprob`, each through the engine's guard and hygiene;
        with `patience`, only the samples done by the greedy one's time times 1 + `patience`
        (engine/sampling.py). Raises as `translate` does."""
        ...


_SAMPLER_CLASSES: dict[type, bool] = {}


def is_sampler(translator: object) -> TypeGuard[Sampler]:
    """Whether `translator` makes candidates (asked once per class, as `is_tiered`)."""
    cls = type(translator)
    known = _SAMPLER_CLASSES.get(cls)
    if known is None:
        known = _SAMPLER_CLASSES[cls] = isinstance(translator, Sampler)
    return known


@runtime_checkable
class Tiered(Protocol):
    """A translator with quality tiers: several models for some pairs (engine/multi.py)."""

    def choose(self, source: str, target: str, quality: Quality | None) -> Translator:
        """The model's engine for this pair: the hinted tier's when it serves the pair, else
        the pair's default. Raises UnsupportedLanguage for a pair no model serves."""
        ...

    def tier_of(self, model: str) -> Quality:
        """The tier of a served model."""
        ...


_TIERED_CLASSES: dict[type, bool] = {}


def is_tiered(translator: object) -> TypeGuard[Tiered]:
    """Whether `translator` has quality tiers: `isinstance(x, Tiered)` asked once per class (a
    runtime Protocol check walks the Protocol's members every time, ~17 us, on every
    request's path)."""
    cls = type(translator)
    tiered = _TIERED_CLASSES.get(cls)
    if tiered is None:
        tiered = _TIERED_CLASSES[cls] = isinstance(translator, Tiered)
    return tiered


# -- chat: the OpenAI surface's generation, straight to the engine ---------------------------

ChatFinish = Literal["stop", "length"]


@dataclass(frozen=True)
class ChatParams:
    """Sampling for one chat request. None: the model's default (its generation config, else
    vLLM's neutral one); `max_tokens` None: as many as the context has room for."""

    max_tokens: int | None = None
    cap: int | None = None
    """The server's own bound on the tokens generated, whatever `max_tokens` or the model's
    default asks: its output limit, and what the caller's key may still spend (None: none)."""
    temperature: float | None = None
    top_p: float | None = None
    top_k: int | None = None
    min_p: float | None = None
    repetition_penalty: float | None = None
    presence_penalty: float | None = None
    frequency_penalty: float | None = None
    ignore_eos: bool = False
    stop: tuple[str, ...] = ()
    seed: int | None = None


def chat_budget(params: ChatParams, default: int | None, room: int) -> int:
    """The most tokens a chat answer may have: `max_tokens` (else the model's `default`),
    within the context's `room` and the server's `cap`."""
    asked = params.max_tokens or default
    budget = min(asked, room) if asked else room
    return min(budget, params.cap) if params.cap else budget


@dataclass(frozen=True)
class ChatChunk:
    """A step of a chat answer; `text` is what is new since the previous chunk."""

    text: str
    prompt_tokens: int
    completion_tokens: int = 0
    finish_reason: ChatFinish | None = None
    """Set on the last chunk only, which also carries the final token counts."""


@runtime_checkable
class ChatEngine(Protocol):
    """Generation with a model's own chat template, not a translation (OpenAI chat
    completions). Translators that can also chat implement it; others serve no chat model."""

    def chat_models(self) -> dict[str, str]:
        """The served model names chat accepts, each with its root: the weights' directory or
        hub id, which vLLM's /v1/models reports and benchmark clients load a tokenizer from."""
        ...

    def chat(
        self, model: str, messages: list[dict[str, str]], params: ChatParams
    ) -> AsyncGenerator[ChatChunk, None]:
        """Chunks of the answer of `model` (one of `chat_models()`) to `messages` (`role`,
        `content`). The first chunk comes once the prompt is accepted, before any engine work
        (empty text, `prompt_tokens` set): ContextTooLong or InvalidRequest come before it.
        Then text deltas, the last with its finish reason; EngineFailed or EngineDead on the
        way. Closing the generator early aborts the engine request."""
        ...
