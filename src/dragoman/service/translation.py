"""The one translation service every API surface calls. In order: refuse while draining; check
the request against the model and settings; check the caller's per-key limits; detect the
language of each text when the source is not given; admit it whole or refuse it (admission
control); then send every text to the engine as its own concurrent request, within the
request's deadline, an identical text already in flight joining that one (coalescing). Texts
with no letters, and texts already in the target language, come back as they are, with no
engine work. Surfaces map its results and errors to their shapes."""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from dragoman.detect import Detection, LanguageDetector
from dragoman.detect._clean import has_letters, strip_non_language
from dragoman.engine.protocol import Translation, Translator
from dragoman.errors import (
    DeadlineExceeded,
    DragomanError,
    TextTooLong,
    TooManyItems,
    UnsupportedLanguage,
)
from dragoman.languages import NAMES, check_pair
from dragoman.metrics import Metrics
from dragoman.service.admission import Admission, Ticket
from dragoman.service.coalesce import Coalescer
from dragoman.service.deadline import Deadline
from dragoman.service.keys import Caller
from dragoman.service.quota import KeyLimits
from dragoman.settings import ServeSettings

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Translated:
    results: list[Translation]
    model: str
    sources: list[str | None]
    """The language each text was translated from: the given source, or the detected one
    (None when a text has no letters or its language could not be told)."""
    detections: list[Detection] | None = None
    """Per text, when the source was detected."""


@functools.lru_cache(maxsize=4)
def shared_detector(codes: tuple[str, ...]) -> LanguageDetector:
    """One detector per set of languages in the process (loading one takes seconds and
    hundreds of MB): the server loads it once its engine is up."""
    return LanguageDetector(codes)


def unchanged(text: str) -> Translation:
    """A text returned as it is: no letters, or already in the target language."""
    return Translation(text, "unchanged", 0, 0, 0.0, 0.0)


def needs_translation(text: str) -> bool:
    """False for numbers, emoji, URLs, placeholders or markup alone: nothing to translate."""
    return has_letters(strip_non_language(text))


class TranslationService:
    def __init__(
        self,
        translator: Callable[[], Translator],
        settings: ServeSettings,
        metrics: Metrics,
        admission: Admission,
        limits: KeyLimits,
    ) -> None:
        self._translator = translator  # raises EngineNotReady / EngineDead
        self.settings = settings
        self.metrics = metrics
        self.admission = admission
        self.limits = limits
        self._coalescer: Coalescer[Translation] = Coalescer(metrics.coalesced.inc)

    def _check(
        self, texts: list[str], source: str | None, target: str | None, translator: Translator
    ) -> None:
        limit = self.settings.max_items
        if len(texts) > limit:
            raise TooManyItems(f"{len(texts)} texts in one request; the limit is {limit}")
        if target is None:
            pass  # detection only
        elif source is not None:
            check_pair(source, target, translator.languages)
        elif target not in translator.languages:
            known = NAMES.get(target)
            raise UnsupportedLanguage(
                f"target_lang: {target!r} ({known}) is not served by this model"
                if known
                else f"target_lang: unknown language code {target!r} (ISO 639-1)"
            )
        for i, text in enumerate(texts):
            if len(text) > self.settings.max_text_chars:
                where = "text" if len(texts) == 1 else f"text[{i}]"
                raise TextTooLong(
                    f"{where} is {len(text)} characters; the limit is "
                    f"{self.settings.max_text_chars}"
                )

    @property
    def detector(self) -> LanguageDetector:
        """The detector for the served languages (EngineNotReady before the engine is up)."""
        return shared_detector(tuple(sorted(self._translator().languages)))

    async def detect(self, texts: list[str]) -> list[Detection]:
        """Each text's language on its own (a mixed batch gets one answer per text). Off the
        event loop: lingua takes about a millisecond a sentence, and its first use loads it."""
        detections = await asyncio.to_thread(self.detector.detect_many, texts)
        for d in detections:
            outcome = "detected" if d.language else "no_letters" if not d.has_letters else "unknown"
            self.metrics.detections.labels(outcome).inc()
        return detections

    async def identify(self, texts: list[str], caller: Caller) -> list[Detection]:
        """The language of each text (LibreTranslate's /detect), within the same limits and
        key checks as a translation; no engine work."""
        self.admission.check_open()
        translator = self._translator()
        self._check(texts, None, None, translator)
        chars = sum(len(t) for t in texts)
        self.limits.check(caller, chars)
        self.limits.charge(caller, chars)
        return await self.detect(texts)

    async def translate(
        self,
        texts: list[str],
        source: str | None,
        target: str,
        caller: Caller,
        deadline: Deadline,
    ) -> Translated:
        """Translate `texts` from `source` (None: detect each text's) into `target`."""
        self.admission.check_open()  # a draining server says so before anything else
        translator = self._translator()
        self._check(texts, source, target, translator)
        chars = sum(len(t) for t in texts)
        self.limits.check(caller, chars)
        detections = None
        if source is None:
            detections = await self.detect(texts)
            sources = [d.language for d in detections]
        else:
            sources = [source if needs_translation(t) else None for t in texts]
        # The engine's work: texts with a language that is not already the target.
        work = [i for i, s in enumerate(sources) if s is not None and s != target]
        remaining = deadline.remaining()
        if remaining <= 0:
            self.metrics.expired.inc()
            raise DeadlineExceeded(
                f"the request's deadline of {deadline.seconds:g} s passed before it was admitted"
            )
        ticket = self.admission.admit(len(work), remaining) if work else None
        self.limits.charge(caller, chars)  # the key's use and the admission agree
        self.metrics.admitted.inc()
        if caller.name is not None:
            self.metrics.key_requests.labels(caller.name).inc()
            self.metrics.key_characters.labels(caller.name).inc(chars)
        results = [unchanged(t) for t in texts]
        if ticket is not None:
            try:
                jobs = [(texts[i], sources[i] or "", target) for i in work]
                done = await self._fan_out(translator, jobs, ticket, deadline)
            finally:
                ticket.release()
            for i, r in zip(work, done, strict=True):
                results[i] = r
        for r in results:
            self.metrics.translations.labels(r.finish_reason).inc()
            self.metrics.tokens.labels("input").inc(r.input_tokens)
            self.metrics.tokens.labels("output").inc(r.output_tokens)
        model = translator.model_for(next((s for s in sources if s), target), target)
        return Translated(results, model, sources, detections)

    def _one(self, translator: Translator, text: str, source: str, target: str) -> Any:
        """One engine request, shared with any identical one in flight."""
        key = (translator.model_for(source, target), source, target, text)
        return self._coalescer.run(key, lambda: translator.translate(text, source, target))

    async def _fan_out(
        self,
        translator: Translator,
        jobs: list[tuple[str, str, str]],
        ticket: Ticket,
        deadline: Deadline,
    ) -> list[Translation]:
        async def one(text: str, source: str, target: str) -> Translation:
            result: Translation = await self._one(translator, text, source, target)
            ticket.done_one()
            return result

        tasks: list[asyncio.Task[Translation]] = []
        try:
            async with asyncio.timeout(deadline.remaining()):
                # A TaskGroup cancels (so aborts in the engine) the other texts as soon as one
                # fails, when the deadline passes, or when the client leaves.
                try:
                    async with asyncio.TaskGroup() as group:
                        tasks = [group.create_task(one(*job)) for job in jobs]
                except* DragomanError as eg:
                    raise eg.exceptions[0] from None
        except TimeoutError:
            self.metrics.expired.inc()
            aborted = sum(t.cancelled() for t in tasks)
            log.warning("deadline of %g s passed: %d texts aborted", deadline.seconds, aborted)
            raise DeadlineExceeded(
                f"the request's deadline of {deadline.seconds:g} s passed; its unfinished texts "
                f"were aborted ({aborted} of {len(jobs)})"
            ) from None
        finally:
            self.metrics.aborted.inc(sum(t.cancelled() for t in tasks))
        return [task.result() for task in tasks]
