"""The native surface's side of the translation service: its request in, its response out.
Checks, admission, deadlines and the engine fan-out are the service's (dragoman.service)."""

from __future__ import annotations

import time

from dragoman.api.translate.protocol import (
    Timing,
    TranslateRequest,
    TranslateResponse,
    TranslationItem,
    Usage,
)
from dragoman.service.deadline import Deadline
from dragoman.service.documents import TextOptions
from dragoman.service.glossary import check_entries
from dragoman.service.keys import Caller
from dragoman.service.translation import TranslationService


async def translate(
    req: TranslateRequest, service: TranslationService, caller: Caller, deadline: Deadline
) -> TranslateResponse:
    started = time.monotonic()
    out = await service.translate(
        req.texts,
        None if req.source_lang == "auto" else req.source_lang,
        req.target_lang,
        caller,
        deadline.tighten(req.timeout),
        TextOptions(
            split=req.split_sentences,
            markup=None if req.format == "text" else req.format,
            glossary=check_entries(tuple((req.glossary or {}).items())),
            context=req.context,
        ),
        req.quality,
        req.candidates,
        req.alternatives,
    )
    results = out.results
    return TranslateResponse(
        translations=[
            TranslationItem(
                text=r.text,
                finish_reason=r.finish_reason,
                input_tokens=r.input_tokens,
                output_tokens=r.output_tokens,
                queue_seconds=round(r.queue_seconds, 6),
                inference_seconds=round(r.inference_seconds, 6),
                glossary_missed=None if out.missed_terms is None else out.missed_terms[i],
                detected_source_lang=out.sources[i] if out.detections is not None else None,
                model=out.models[i] if out.models is not None else None,
                alternatives=list(r.alternatives) if req.alternatives else None,
            )
            for i, r in enumerate(results)
        ],
        model=out.model,
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
