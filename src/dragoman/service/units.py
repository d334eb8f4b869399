"""A request's units in the engine: each from the local cache, else joined to an identical
one in flight, else from the shared store, else one engine request whose reply is checked (and
asked again once, naming what failed); all of a request's units concurrently, within its
admitted places and its deadline."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import cast

from dragoman.detect import LanguageDetector
from dragoman.engine.prompts import InContext, Insisted, insist_note
from dragoman.engine.protocol import (
    Quality,
    Sampler,
    Terms,
    Translation,
    Translator,
    charged_both,
)
from dragoman.errors import DeadlineExceeded, DragomanError
from dragoman.metrics import Metrics
from dragoman.service import context
from dragoman.service.admission import Ticket
from dragoman.service.cache import TranslationCache
from dragoman.service.candidates import Policy, pick
from dragoman.service.coalesce import Coalescer
from dragoman.service.deadline import Deadline
from dragoman.service.validate import Failure, Validator, rank

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Job:
    """A unit's engine request."""

    model: Translator
    shown: str
    """The unit as the prompt shows it (with its neighbours where asked)."""
    source: str
    target: str
    terms: Terms
    """The glossary's terms it holds."""
    key: bytes
    """Its cache key (`TranslationService.key_of`)."""
    asked: int | None = None
    """The candidates its request asked for (None: the server's choice)."""
    quality: Quality | None = None
    alternatives: int = 0
    """The runners-up its request wants."""


class Units:
    """Runs units in the engine for the translation service (which cuts and admits them)."""

    def __init__(
        self,
        cache: TranslationCache,
        metrics: Metrics,
        retry_invalid: bool,
        detector: Callable[[], LanguageDetector],
        policy: Policy,
    ) -> None:
        self.policy = policy
        self.cache = cache
        self.metrics = metrics
        self.retry_invalid = retry_invalid
        self._detector = detector
        self._coalescer: Coalescer[Translation] = Coalescer(metrics.coalesced.inc)

    async def unit(self, job: Job, deadline: Deadline) -> Translation:
        """One unit: from the local cache, else shared with any identical one in flight: one
        lookup in the shared store and, on its miss, one engine request. A unit that joins one
        in flight counts as coalesced, not as a shared lookup (it made none: fifty identical
        units asked the store fifty times before they merged)."""
        need = self.policy.need(job.asked, job.quality, job.alternatives)
        hit = self.cache.get(job.key, need)
        if hit is not None:
            return hit

        async def stored_or_checked() -> Translation:
            """The shared store's translation, where there is one, else the engine's."""
            stored = await self.cache.fetch(job.key, need)
            if stored is not None:
                return stored
            wanted = self.policy.k(job.model, job.asked, job.quality, job.alternatives)
            self.metrics.candidates.labels(str(wanted.k), wanted.why).inc()
            if wanted.k > 1:
                return await self._consensus(job, wanted.k, wanted.patience, deadline)
            return await self._checked(
                job.model, job.shown, job.source, job.target, job.terms, deadline, job.key
            )

        # The same unit, model, pair, terms and neighbours, and as many candidates at least.
        joined = job.key + bytes([need])
        result: Translation = await self._coalescer.run(joined, stored_or_checked)
        return result

    async def _consensus(
        self, job: Job, k: int, patience: float | None, deadline: Deadline
    ) -> Translation:
        """`k` candidates of one unit, each checked, and the consensus of those that passed
        (service/candidates.py), its runners-up as alternatives; where none passed, the
        greedy one goes the way of a single reply (asked again once)."""
        text, source, target = job.shown, job.source, job.target
        sampler = cast(Sampler, job.model)
        replies = await sampler.candidates(text, source, target, job.terms, k, patience)
        validator = Validator(self._detector())

        def failure(reply: Translation) -> str | None:
            failed, _ = check_reply(validator, text, reply.text, target, source)
            if failed is None and isinstance(text, InContext):
                return "context" if context.overflows(reply, text, source, target) else None
            return failed

        # The checks and the pick in one trip off the event loop.
        order = await asyncio.to_thread(lambda: pick(replies, [failure(r) for r in replies]))
        if not order:
            return await self._checked(
                job.model, text, source, target, job.terms, deadline, job.key, replies[0]
            )
        kept = replace(
            replies[order[0]],
            input_tokens=sum(r.input_tokens for r in replies),
            output_tokens=sum(r.output_tokens for r in replies),
            inference_seconds=max(r.inference_seconds for r in replies),
            candidates=len(replies),
            alternatives=tuple(replies[i].text for i in order[1:]),
        )
        self.cache.put(job.key, kept)
        return kept

    async def _checked(
        self,
        translator: Translator,
        text: str,
        source: str,
        target: str,
        terms: Terms,
        deadline: Deadline,
        key: bytes,
        first: Translation | None = None,
    ) -> Translation:
        """One unit's engine request, checked; a failed reply is asked again once, with an
        instruction naming what failed, within the unit's admitted place and the deadline.
        Cached (once for every request that joined it) when the check had its say: a reply
        that passed, or the better of two that both failed (greedy, then seeded: asked again
        they come back the same, two engine requests for the same answer each time). Not one
        kept only because the deadline left no time to ask again: one client's short deadline
        would have fixed a failing reply for every later request (for a week from a shared
        store). `first`: a reply already made (the greedy one of candidates that all failed)."""
        if first is None:
            first = await context.translate(translator, text, source, target, terms)
        if not self.retry_invalid:
            self.cache.put(key, first)
            return first
        validator = Validator(self._detector())
        failure, repaired = await asyncio.to_thread(
            check_reply, validator, text, first.text, target, source
        )
        if repaired:
            self.metrics.validation_retries.labels("markers", "repaired").inc()
        if failure is None:
            self.cache.put(key, first)
            return first
        # A second reply takes about as long as the first: no time for it, keep the first.
        if deadline.remaining() < 2 * first.inference_seconds:
            self.metrics.validation_retries.labels(failure, "skipped").inc()
            return first
        again = Insisted(str(text), insist_note(text, target, failure))
        second = await translator.translate(again, source, target, terms)
        failed = await asyncio.to_thread(
            validator.check, text, second.text, target, source, (failure, again.note)
        )
        outcome = "fixed" if failed is None else "failed"
        self.metrics.validation_retries.labels(failure, outcome).inc()
        log.info("reply failed its check (%s): asked again, %s", failure, outcome)
        best = charged_both(second if rank(failed) < rank(failure) else first, first, second)
        self.cache.put(key, best)  # a hit reports both requests' tokens too
        return best

    async def fan_out(
        self,
        jobs: list[Job],
        ticket: Ticket,
        held: int,
        deadline: Deadline,
    ) -> list[Translation]:
        """Every job concurrently, at most `held` (the admitted places) at a time: `held`
        workers take them in order (a task per unit made 100,000 for a list of short lines,
        run a step each before the loop answered anything else: /ready waited 3 s)."""
        results: list[Translation | None] = [None] * len(jobs)
        todo = iter(enumerate(jobs))
        failed = 0

        async def worker() -> None:
            nonlocal failed
            for i, job in todo:
                try:
                    results[i] = await self.unit(job, deadline)
                except DragomanError:
                    failed += 1
                    raise
                await asyncio.sleep(0)  # a run of cache hits lets the loop serve others
            ticket.done_one()  # nothing left to take the place: it frees

        def aborted() -> int:
            return sum(r is None for r in results) - failed

        complete = False
        ticket.waiting_in(asyncio.current_task())
        try:
            async with asyncio.timeout(deadline.remaining()):
                # A TaskGroup cancels (so aborts in the engine) the other units as soon as one
                # fails, when the deadline passes, or when the client leaves.
                try:
                    async with asyncio.TaskGroup() as group:
                        for _ in range(held):
                            group.create_task(worker())
                except* DragomanError as eg:
                    raise eg.exceptions[0] from None
            complete = True
        except TimeoutError:
            self.metrics.expired.inc()
            log.warning("deadline of %g s passed: %d units aborted", deadline.seconds, aborted())
            raise DeadlineExceeded(
                f"the request's deadline of {deadline.seconds:g} s passed; its unfinished texts "
                f"were aborted ({aborted()} of {len(jobs)})"
            ) from None
        except asyncio.CancelledError as cancelled:
            raise ticket.aborted_by(cancelled) from None  # the server stopped; else re-raised
        finally:
            ticket.waiting_in(None)
            if not complete:
                self.metrics.aborted.inc(aborted())
        return [r for r in results if r is not None]


def check_reply(
    validator: Validator, text: str, reply: str, target: str, source: str
) -> tuple[Failure | None, bool]:
    """What `reply` fails of its check (None: nothing), and whether its only fault was lost
    inline markers: those are put back where their text is (text/markup) rather than asked
    again, which fixed none of the 16 such replies measured on the default model and made a
    formatted paragraph cost two decodes (benchmarks/results/files-amxbf16-2core)."""
    failure = validator.check(text, reply, target, source)
    if failure == "placeholders" and validator.only_markers_broken(text, reply, target, source):
        return None, True
    return failure, False
