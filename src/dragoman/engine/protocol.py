"""What the API needs from an engine. The real one is `vllm_engine.VllmTranslator`; HTTP-layer
unit tests use a small fake with the same shape."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, Protocol

if TYPE_CHECKING:
    from dragoman.engine.plan import EnginePlan

FinishReason = Literal["stop", "length", "repetition", "unchanged"]


@dataclass(frozen=True)
class Translation:
    text: str
    finish_reason: FinishReason
    input_tokens: int
    output_tokens: int
    queue_seconds: float
    inference_seconds: float


class Translator(Protocol):
    model_name: str
    languages: tuple[str, ...]
    plans: dict[str, EnginePlan]
    """Each model's engine plan (what the host got and why); empty without a real engine."""

    async def translate(self, text: str, source: str, target: str) -> Translation:
        """Translate one text. Raises TextTooLong, EngineFailed or EngineDead."""
        ...

    async def check_health(self) -> None:
        """Raise EngineDead if the engine cannot answer."""
        ...

    def num_unfinished_requests(self) -> int: ...

    def model_for(self, source: str, target: str) -> str:
        """The model that translates this pair (several models share a server)."""
        ...
