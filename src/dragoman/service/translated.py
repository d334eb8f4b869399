"""What the translation service answers for a request, and a text's translation put
together from its units': the answer's type, the text returned as it is, the units' results
combined, and what a text costs its key."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from dragoman.detect import Detection
from dragoman.engine.prompts import InContext
from dragoman.engine.protocol import FinishReason, Quality, Terms, Translation

if TYPE_CHECKING:
    from dragoman.service.documents import Plan


@dataclass(frozen=True)
class Translated:
    results: list[Translation]
    model: str
    sources: list[str | None]
    """The language each text was translated from: the given source, or the detected one
    (None when a text has no letters or its language could not be told)."""
    detections: list[Detection] | None = None
    """Per text, when the source was detected."""
    missed_terms: list[list[str]] | None = None
    """Per text, with a glossary: source terms whose target term the translation lacks."""
    quality: Quality | None = None
    """The tier of `model` (None when no text needed the engine)."""
    models: list[str | None] | None = None
    """Per text, the model that translated it (None: it needed none); a list may mix them."""
    qualities: list[Quality | None] | None = None
    """Per text, the tier of its model (None: it needed none)."""
    charged: list[int] | None = None
    """Per text, the characters its key was charged for it (`charge_of`)."""


def charge_of(text: str, units: Iterable[tuple[str, Terms]]) -> int:
    """What a text costs its key, in characters: its own, and what the prompts of its units
    sent to the model show beside them (each `(unit as shown, its glossary terms)`): the
    glossary terms it holds and the neighbouring sentences shown as context, each as often as
    a prompt shows it. The same whether the cache answers or the engine: the answer's usage
    does not tell one caller what another translated."""
    extra = 0
    for shown, terms in units:
        extra += sum(len(source) + len(target) for source, target in terms)
        if isinstance(shown, InContext):
            extra += len(shown.before) + len(shown.after)
    return len(text) + extra


def unchanged(text: str) -> Translation:
    """A text returned as it is: no letters, or already in the target language."""
    return Translation(text, "unchanged", 0, 0, 0.0, 0.0)


def combine(text: str, parts: list[Translation]) -> Translation:
    """One text's translation from its units': the worst ending, tokens summed, the longest
    queue and compute time (the units ran concurrently)."""
    reasons = {p.finish_reason for p in parts}
    finish: FinishReason = "unchanged"
    for reason in ("length", "repetition", "stop"):
        if reason in reasons:
            finish = reason
            break
    return Translation(
        text,
        finish,
        sum(p.input_tokens for p in parts),
        sum(p.output_tokens for p in parts),
        max((p.queue_seconds for p in parts), default=0.0),
        max((p.inference_seconds for p in parts), default=0.0),
    )


def with_alternatives(
    whole: Translation, plan: Plan, parts: list[Translation], most: int
) -> Translation:
    """`whole` (a text put together from its units' picks) with up to `most` alternatives:
    the j-th puts together each unit's j-th runner-up where it has one, else its pick;
    distinct, and none the same as the pick."""
    seen = {whole.text}
    alternatives: list[str] = []
    for j in range(most):
        if not any(len(p.alternatives) > j for p in parts):
            break
        texts = [p.alternatives[j] if len(p.alternatives) > j else p.text for p in parts]
        text, _ = plan.assemble(texts)
        if text not in seen:
            seen.add(text)
            alternatives.append(text)
    made = max((p.candidates for p in parts), default=1)
    return replace(whole, alternatives=tuple(alternatives), candidates=made)
