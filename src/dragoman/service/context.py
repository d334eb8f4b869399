"""Neighbour context: each sentence of a cut-up text sent with the sentence before it (and the
one after), shown to the model as context, not to translate. Off by default: whether it helps
is measured (benchmarks/README.md, "Neighbour context"). A reply that carries more than the
sentence (the model translated a neighbour too, or copied it) is asked again without them."""

from __future__ import annotations

import logging

import sentencex

from dragoman.engine.prompts import MARKERS, InContext
from dragoman.engine.protocol import ContextMode, Terms, Translation, Translator, charged_both

log = logging.getLogger(__name__)


def with_neighbours(units: list[str], mode: ContextMode) -> list[str]:
    """`units` (one text's sentences, in order), each with its neighbours where `mode` asks."""
    if mode == "off" or len(units) < 2:
        return units
    shown = [MARKERS.sub("", u) for u in units]  # a neighbour's tags are not the model's work
    out: list[str] = []
    for k, unit in enumerate(units):
        before = shown[k - 1] if k > 0 else ""
        after = shown[k + 1] if mode == "both" and k + 1 < len(units) else ""
        out.append(InContext(unit, before, after) if before or after else unit)
    return out


def _sentences(text: str, language: str) -> int:
    return sum(1 for s in sentencex.segment(language, text) if s.strip())


def overflows(reply: Translation, unit: InContext, source: str, target: str) -> str | None:
    """Why `reply` holds more than `unit`'s translation, or None."""
    if reply.finish_reason == "length":
        return "ran out of the sentence's budget"
    for neighbour in (unit.before, unit.after):
        if neighbour and neighbour.strip() in reply.text:
            return "copied a neighbour"
    if _sentences(reply.text, target) > _sentences(str(unit), source):
        return "has more sentences than the source"
    return None


async def translate(
    translator: Translator, text: str, source: str, target: str, terms: Terms
) -> Translation:
    """One engine request for `text`, with its neighbours when it has them; a reply that
    overflows is asked again for the sentence alone (both requests' tokens counted)."""
    reply = await translator.translate(text, source, target, terms)
    if not isinstance(text, InContext):
        return reply
    why = overflows(reply, text, source, target)
    if why is None:
        return reply
    log.info("context dropped for a sentence: the reply %s", why)
    alone = await translator.translate(str(text), source, target, terms)
    return charged_both(alone, reply, alone)
