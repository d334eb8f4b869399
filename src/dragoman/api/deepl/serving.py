"""DeepL's side of the translation service. Every translation carries `billed_characters` (what
its key was charged for it: the text's characters, and the glossary terms and neighbouring
sentences its prompts showed; the `deepl` client requires the field) and
`detected_source_language` (the given source, or each text's detected one). /v2/usage reports
the key's characters today."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from dragoman.api.deepl.protocol import (
    MAX_GLOSSARIES_A_REQUEST,
    DeepLLanguage,
    DeepLTranslateResponse,
    DeepLTranslation,
    DeepLUsage,
    from_deepl,
    model_type_used,
    options_of,
    parse_translate,
    target_codes,
    to_deepl,
)
from dragoman.engine.protocol import Terms, Translator
from dragoman.errors import InvalidRequest
from dragoman.languages import NAMES
from dragoman.service.deadline import Deadline
from dragoman.service.glossary import Glossaries
from dragoman.service.keys import Caller
from dragoman.service.quota import KeyLimits
from dragoman.service.translation import TranslationService

# What /v2/usage reports as the limit when none applies (a zero would read as "used up").
NO_LIMIT = 10**12


async def glossary_terms(
    glossaries: Glossaries, ids: list[str], source: str | None, target: str, caller: Caller
) -> Terms:
    """The entries of the glossaries named (a text's or a document's), as DeepL takes them:
    at most MAX_GLOSSARIES_A_REQUEST, each of the request's pair, a source language given."""
    if len(ids) > MAX_GLOSSARIES_A_REQUEST:
        raise InvalidRequest(f"at most {MAX_GLOSSARIES_A_REQUEST} glossaries a request")
    if not ids:
        return ()
    if source is None:
        raise InvalidRequest("Use of a glossary requires the source_lang parameter to be set")
    terms: list[tuple[str, str]] = []
    for glossary_id in ids:
        g = await glossaries.get(glossary_id, caller.key)
        if (g.source_lang, g.target_lang) != (source, target):
            raise InvalidRequest(
                f"glossary {glossary_id} is {g.source_lang}->{g.target_lang}, not "
                f"{source}->{target}"
            )
        terms += g.entries
    return tuple(terms)


async def translate(
    params: dict[str, Any],
    service: TranslationService,
    glossaries: Glossaries,
    caller: Caller,
    deadline: Deadline,
) -> DeepLTranslateResponse:
    req = parse_translate(params)
    target = from_deepl(req.target_lang, "target_lang")
    source = None if req.source_lang is None else from_deepl(req.source_lang, "source_lang")
    options = options_of(req)
    ids = list(dict.fromkeys([*([req.glossary_id] if req.glossary_id else []), *req.glossary_ids]))
    if terms := await glossary_terms(glossaries, ids, source, target, caller):
        options = replace(options, glossary=terms)
    out = await service.translate(req.text, source, target, caller, deadline, options, req.quality)
    # Each text's own tier (a list may mix models); a text no model translated: the request's.
    tiers = out.qualities or [None] * len(req.text)
    billed = out.charged or [len(text) for text in req.text]
    return DeepLTranslateResponse(
        translations=[
            DeepLTranslation(
                # A text with no letters was not translated: it reports the source given,
                # else the target's code.
                detected_source_language=to_deepl(src or source or target),
                text=r.text,
                billed_characters=charged,
                model_type_used=None
                if req.model_type is None
                else model_type_used(tier or out.quality),
            )
            for r, src, tier, charged in zip(out.results, out.sources, tiers, billed, strict=True)
        ]
    )


def language_kind(kind: str) -> str:
    if kind.lower() not in ("source", "target"):
        raise InvalidRequest(f"Value for 'type' not supported: {kind!r} (source or target)")
    return kind.lower()


def languages(translator: Translator, kind: str) -> list[DeepLLanguage]:
    served = translator.languages
    if language_kind(kind) == "target":
        return [
            DeepLLanguage(language=code, name=name, supports_formality=False)
            for ours in served
            for code, name in target_codes(ours)
        ]
    return [DeepLLanguage(language=to_deepl(c), name=NAMES[c]) for c in served]


def usage(limits: KeyLimits, caller: Caller) -> DeepLUsage:
    limit = limits.cpd if limits.cpd and caller.key is not None else NO_LIMIT
    return DeepLUsage(character_count=limits.day_usage(caller), character_limit=limit)
