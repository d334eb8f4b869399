"""The one translation service every API surface calls. In order: refuse while draining; check
the request against the model and settings; check the caller's per-key limits; admit it whole
or refuse it (admission control); then send every text to the engine as its own concurrent
request, within the request's deadline. Surfaces map its results and errors to their shapes."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass

from dragoman.engine.protocol import Translation, Translator
from dragoman.errors import DeadlineExceeded, DragomanError, TextTooLong, TooManyItems
from dragoman.languages import check_pair
from dragoman.metrics import Metrics
from dragoman.service.admission import Admission, Ticket
from dragoman.service.deadline import Deadline
from dragoman.service.keys import Caller
from dragoman.service.quota import KeyLimits
from dragoman.settings import ServeSettings

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Translated:
    results: list[Translation]
    model: str


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

    def _check(self, texts: list[str], source: str, target: str, translator: Translator) -> None:
        limit = self.settings.max_items
        if len(texts) > limit:
            raise TooManyItems(f"{len(texts)} texts in one request; the limit is {limit}")
        check_pair(source, target, translator.languages)
        for i, text in enumerate(texts):
            if len(text) > self.settings.max_text_chars:
                where = "text" if len(texts) == 1 else f"text[{i}]"
                raise TextTooLong(
                    f"{where} is {len(text)} characters; the limit is "
                    f"{self.settings.max_text_chars}"
                )

    async def translate(
        self, texts: list[str], source: str, target: str, caller: Caller, deadline: Deadline
    ) -> Translated:
        self.admission.check_open()  # a draining server says so before anything else
        translator = self._translator()
        self._check(texts, source, target, translator)
        chars = sum(len(t) for t in texts)
        self.limits.check(caller, chars)
        remaining = deadline.remaining()
        if remaining <= 0:
            self.metrics.expired.inc()
            raise DeadlineExceeded(
                f"the request's deadline of {deadline.seconds:g} s passed before it was admitted"
            )
        ticket = self.admission.admit(len(texts), remaining)
        # Nothing awaited since the checks: the key's use and the admission agree.
        self.limits.charge(caller, chars)
        self.metrics.admitted.inc()
        if caller.name is not None:
            self.metrics.key_requests.labels(caller.name).inc()
            self.metrics.key_characters.labels(caller.name).inc(chars)
        try:
            results = await self._fan_out(translator, texts, source, target, ticket, deadline)
        finally:
            ticket.release()
        for r in results:
            self.metrics.translations.labels(r.finish_reason).inc()
            self.metrics.tokens.labels("input").inc(r.input_tokens)
            self.metrics.tokens.labels("output").inc(r.output_tokens)
        return Translated(results, translator.model_for(source, target))

    async def _fan_out(
        self,
        translator: Translator,
        texts: list[str],
        source: str,
        target: str,
        ticket: Ticket,
        deadline: Deadline,
    ) -> list[Translation]:
        async def one(text: str) -> Translation:
            result = await translator.translate(text, source, target)
            ticket.done_one()
            return result

        tasks: list[asyncio.Task[Translation]] = []
        try:
            async with asyncio.timeout(deadline.remaining()):
                # A TaskGroup cancels (so aborts in the engine) the other texts as soon as one
                # fails, when the deadline passes, or when the client leaves.
                try:
                    async with asyncio.TaskGroup() as group:
                        tasks = [group.create_task(one(t)) for t in texts]
                except* DragomanError as eg:
                    raise eg.exceptions[0] from None
        except TimeoutError:
            self.metrics.expired.inc()
            aborted = sum(t.cancelled() for t in tasks)
            log.warning("deadline of %g s passed: %d texts aborted", deadline.seconds, aborted)
            raise DeadlineExceeded(
                f"the request's deadline of {deadline.seconds:g} s passed; its unfinished texts "
                f"were aborted ({aborted} of {len(texts)})"
            ) from None
        finally:
            self.metrics.aborted.inc(sum(t.cancelled() for t in tasks))
        return [task.result() for task in tasks]
