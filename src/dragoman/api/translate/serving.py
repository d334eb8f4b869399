"""The translation service: checks a request against the model and settings, sends every text to
the engine as its own concurrent request, and assembles the answer in input order."""

from __future__ import annotations

import asyncio
import time

from dragoman.api.translate.protocol import (
    Timing,
    TranslateRequest,
    TranslateResponse,
    TranslationItem,
    Usage,
)
from dragoman.engine.protocol import Translation, Translator
from dragoman.errors import DragomanError, TextTooLong, TooManyItems
from dragoman.languages import check_pair
from dragoman.metrics import Metrics
from dragoman.settings import ServeSettings


async def _translate_all(
    translator: Translator, texts: list[str], source: str, target: str
) -> list[Translation]:
    # A TaskGroup cancels (so aborts in the engine) the other texts as soon as one fails.
    try:
        async with asyncio.TaskGroup() as group:
            tasks = [group.create_task(translator.translate(t, source, target)) for t in texts]
    except* DragomanError as eg:
        raise eg.exceptions[0] from None
    return [task.result() for task in tasks]


async def translate(
    req: TranslateRequest, translator: Translator, settings: ServeSettings, metrics: Metrics
) -> TranslateResponse:
    started = time.monotonic()
    texts = req.texts
    if len(texts) > settings.max_items:
        raise TooManyItems(f"{len(texts)} texts in one request; the limit is {settings.max_items}")
    check_pair(req.source_lang, req.target_lang, translator.languages)
    for i, text in enumerate(texts):
        if len(text) > settings.max_text_chars:
            where = "text" if len(texts) == 1 else f"text[{i}]"
            raise TextTooLong(
                f"{where} is {len(text)} characters; the limit is {settings.max_text_chars}"
            )
    results = await _translate_all(translator, texts, req.source_lang, req.target_lang)
    for r in results:
        metrics.translations.labels(r.finish_reason).inc()
        metrics.tokens.labels("input").inc(r.input_tokens)
        metrics.tokens.labels("output").inc(r.output_tokens)
    return TranslateResponse(
        translations=[
            TranslationItem(
                text=r.text,
                finish_reason=r.finish_reason,
                input_tokens=r.input_tokens,
                output_tokens=r.output_tokens,
                queue_seconds=round(r.queue_seconds, 6),
                inference_seconds=round(r.inference_seconds, 6),
            )
            for r in results
        ],
        model=translator.model_for(req.source_lang, req.target_lang),
        source_lang=req.source_lang,
        target_lang=req.target_lang,
        usage=Usage(
            input_tokens=sum(r.input_tokens for r in results),
            output_tokens=sum(r.output_tokens for r in results),
        ),
        timing=Timing(
            queue_seconds=round(max(r.queue_seconds for r in results), 6),
            inference_seconds=round(max(r.inference_seconds for r in results), 6),
            total_seconds=round(time.monotonic() - started, 6),
        ),
    )
