"""LibreTranslate's side of the translation service: its parameters in, its shapes out.
`detectedLanguage` is per text (a mixed batch gets one answer per text, unlike LibreTranslate's
one detection for the whole batch); a text with no letters comes back as it is with LibreTranslate's
own `{"confidence": 0.0, "language": "en"}`."""

from __future__ import annotations

from typing import Any

from dragoman.api.libretranslate.protocol import (
    ALTERNATIVES_LIMIT,
    DetectedLanguage,
    LtDetectRequest,
    LtLanguage,
    LtTranslateRequest,
    LtTranslateResponse,
    from_lt,
    parse,
    to_lt,
)
from dragoman.detect import Detection, pooled
from dragoman.engine.protocol import Translator
from dragoman.errors import InvalidRequest, UnsupportedLanguage
from dragoman.files import formats
from dragoman.languages import NAMES
from dragoman.service.deadline import Deadline
from dragoman.service.documents import PLAIN, TextOptions
from dragoman.service.keys import Caller, KeyStore
from dragoman.service.translation import TranslationService

KEY_HOW = "api_key=<key> in the request body or query"
NOTHING = DetectedLanguage(confidence=0.0, language="en")  # LibreTranslate's own "don't know"


def caller_of(keys: KeyStore, api_key: str | None) -> Caller:
    return keys.authenticate(api_key or None, KEY_HOW)  # "" and null mean no key


def _detected(d: Detection) -> DetectedLanguage:
    if not d.candidates:
        return NOTHING
    best = d.candidates[0]
    return DetectedLanguage(confidence=best.confidence, language=to_lt(best.language))


async def translate(
    params: dict[str, Any], service: TranslationService, keys: KeyStore, deadline: Deadline
) -> LtTranslateResponse:
    req: LtTranslateRequest = parse(LtTranslateRequest, params, ("q", "target"))
    caller = caller_of(keys, req.api_key)
    if req.format not in ("text", "html"):
        raise InvalidRequest(f"{req.format} format is not supported")
    texts = [req.q] if isinstance(req.q, str) else list(req.q)
    source, target = from_lt(req.source), from_lt(req.target)
    if target is None:
        raise UnsupportedLanguage("auto is not supported as a target language")
    options = TextOptions(markup="html") if req.format == "html" else PLAIN
    if req.alternatives > ALTERNATIVES_LIMIT:
        raise InvalidRequest(
            f"Invalid request: Too many alternatives ({req.alternatives}) exceed the limit "
            f"({ALTERNATIVES_LIMIT})"
        )
    out = await service.translate(
        texts, source, target, caller, deadline, options, alternatives=req.alternatives
    )
    translated = [r.text for r in out.results]
    one = isinstance(req.q, str)
    response = LtTranslateResponse(translatedText=translated[0] if one else translated)
    if out.detections is not None:
        found = [_detected(d) for d in out.detections]
        response.detectedLanguage = found[0] if one else found
    if req.alternatives > 0:
        found_alternatives = [list(r.alternatives) for r in out.results]
        response.alternatives = found_alternatives[0] if one else found_alternatives
    return response


async def detect(
    params: dict[str, Any], service: TranslationService, keys: KeyStore
) -> list[DetectedLanguage]:
    req: LtDetectRequest = parse(LtDetectRequest, params, ("q",))
    caller = caller_of(keys, req.api_key)
    texts = [req.q] if isinstance(req.q, str) else list(req.q)
    found = await service.identify(texts, caller)
    # One ranking for all its texts, as LibreTranslate's (a list was refused, 400); a single
    # text's is its own candidates.
    best = pooled(found, [len(t) for t in texts])
    return [
        DetectedLanguage(confidence=c.confidence, language=to_lt(c.language)) for c in best
    ] or [NOTHING]


def languages(translator: Translator) -> list[LtLanguage]:
    pairs = getattr(translator, "pairs", None)
    served = translator.languages
    out = []
    for code in served:
        if pairs is None:
            targets = [t for t in served if t != code]
        else:
            targets = sorted(t for (s, t) in pairs if s == code)
        out.append(
            LtLanguage(code=to_lt(code), name=NAMES[code], targets=[to_lt(t) for t in targets])
        )
    return out


def frontend_settings(translator: Translator, keys: KeyStore, char_limit: int) -> dict[str, Any]:
    served = translator.languages
    target = "en" if "en" in served else served[0]
    return {
        "charLimit": char_limit,
        "frontendTimeout": 500,
        "apiKeys": keys.enabled,
        "keyRequired": keys.enabled,
        "suggestions": False,
        "filesTranslation": True,  # /translate_file (api/libretranslate/files.py)
        "supportedFilesFormat": [e for f in formats() for e in f.extensions],
        "language": {
            "source": {"code": "auto", "name": "Auto Detect"},
            "target": {"code": to_lt(target), "name": NAMES[target]},
        },
    }
