"""The reply check on the real engine: a sentence the default model hands back in English when
asked for Korean (found in the committed eval, benchmarks/results/eval-avx512bf16-2core/
dragoman/eval.json, en-ko/sentence/019) is asked again, and the answer is in Korean."""

from __future__ import annotations

import httpx
import pytest

from dragoman.bench.servers import Launched
from dragoman.detect import LanguageDetector
from dragoman.engine.prompts import insist_note
from dragoman.models.catalogue import QWEN25_LANGUAGES
from dragoman.service.validate import Validator, holds_note

pytestmark = pytest.mark.integration

SOURCE = 'conf value "epub_author" should not be empty for EPUB3'


def retries(metrics: str, reason: str, outcome: str) -> float:
    label = f'dragoman_validation_retries_total{{outcome="{outcome}",reason="{reason}"}}'
    return sum(
        float(line.rsplit(" ", 1)[1]) for line in metrics.splitlines() if line.startswith(label)
    )


def test_a_reply_left_in_english_is_asked_again_and_comes_back_korean(
    live_server: Launched,
) -> None:
    body = {"text": SOURCE, "source_lang": "en", "target_lang": "ko"}
    with httpx.Client(base_url=live_server.url, timeout=300) as c:
        before = c.get("/metrics").text
        r = c.post("/v1/translate", json=body)
        assert r.status_code == 200, r.text
        after = c.get("/metrics").text
    text = r.json()["translations"][0]["text"]
    fixed = retries(after, "language", "fixed") - retries(before, "language", "fixed")
    failed = retries(after, "language", "failed") - retries(before, "language", "failed")
    assert (fixed, failed) == (1, 0), text
    assert Validator(LanguageDetector(QWEN25_LANGUAGES)).check(SOURCE, text, "ko") is None, text
    assert any("\uac00" <= ch <= "\ud7af" for ch in text), text


# Texts whose second reply, the note given inside the text's request, was the note translated
# ("Répondez en français", "Comentarios en español"): found by probing 110 instruction-like
# texts on this model (benchmarks/README.md, "The note leaking into the reply").
INSTRUCTIONS = [("Answer in English only.", "fr"), ("Answer in English only.", "es")]


def test_an_instruction_like_text_asked_again_does_not_get_the_note_back(
    live_server: Launched,
) -> None:
    with httpx.Client(base_url=live_server.url, timeout=300) as c:
        for source, target in INSTRUCTIONS:
            body = {"text": source, "source_lang": "en", "target_lang": target}
            r = c.post("/v1/translate", json=body)
            assert r.status_code == 200, r.text
            text = r.json()["translations"][0]["text"]
            note = insist_note(source, target, "language")
            assert not holds_note(source, text, target, "language", note), text
