"""The one translation service every API surface calls. In order: refuse while draining; check
the request against the model and settings; check the caller's per-key limits; detect the
language of each text when the source is not given; admit it whole or refuse it (admission
control), charging the caller's key for it (`charge_of`: the texts and what their prompts show
beside them, once here for every surface); then send every text to the engine as its own
concurrent request, within the request's deadline, an identical text already in flight joining
that one (coalescing). Where the server hosts quality tiers, the request's `quality` hint picks
the model of each pair. Texts with no letters, and texts already in the target language, come
back as they are, with no engine work. Surfaces map its results and errors to their shapes."""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass
from itertools import compress
from typing import TypeVar

from dragoman.detect import Detection, LanguageDetector
from dragoman.detect import has_language as needs_translation
from dragoman.engine.prompts import Insisted, insist_note
from dragoman.engine.protocol import (
    Quality,
    Terms,
    Translation,
    Translator,
    charged_both,
    is_tiered,
)
from dragoman.errors import (
    DeadlineExceeded,
    DragomanError,
    TextTooLong,
    TooManyItems,
    UnsupportedLanguage,
)
from dragoman.languages import check_code, check_pair
from dragoman.metrics import Metrics
from dragoman.models.catalogue import tier_of
from dragoman.service import context, textwork
from dragoman.service.admission import Admission, Ticket
from dragoman.service.cache import TranslationCache, as_hit, settings_salt
from dragoman.service.cache_store import SharedStore
from dragoman.service.coalesce import Coalescer
from dragoman.service.deadline import Deadline
from dragoman.service.documents import PLAIN, Plan, Sizes, TextOptions, parse, plan
from dragoman.service.glossary import index_of, missed, terms_in
from dragoman.service.keys import Caller
from dragoman.service.quota import KeyLimits
from dragoman.service.settings import ServeSettings
from dragoman.service.textwork import each_once
from dragoman.service.translated import Translated, charge_of, combine, unchanged
from dragoman.service.validate import Validator, rank
from dragoman.text.markup import Markup

log = logging.getLogger(__name__)

T = TypeVar("T")


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


@functools.lru_cache(maxsize=4)
def shared_detector(codes: tuple[str, ...]) -> LanguageDetector:
    """One detector per set of languages in the process (loading one takes seconds and
    hundreds of MB): the server loads it once its engine is up."""
    return LanguageDetector(codes)


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
        self.sizes = Sizes(settings.max_unit_chars, settings.min_split_chars)
        store = None
        if settings.cache_url:
            store = SharedStore(settings.cache_url, settings.cache_ttl, metrics)
        salt = settings_salt(settings)
        self.cache = TranslationCache(settings.cache_mib * 2**20, salt, metrics, store)
        # A model's form when its translator has no plan for it (echo; the Ray ingress, whose
        # engines run elsewhere): the settings as given.
        self._unplanned = f"{settings.weights}/{settings.gguf_weights}/{settings.dtype}"

    async def __aenter__(self) -> TranslationService:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.cache.aclose()  # the shared store's connections

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
        else:
            check_code("target_lang", target, translator.languages)
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
        options: TextOptions = PLAIN,
        quality: Quality | None = None,
    ) -> Translated:
        """Translate `texts` from `source` (None: detect each text's) into `target`, on the
        `quality` tier's model where the server hosts tiers (None: each pair's default)."""
        self.admission.check_open()  # a draining server says so before anything else
        translator = self._translator()
        self._check(texts, source, target, translator)
        chars = sum(len(t) for t in texts)
        size = chars  # a long request's text work runs off the event loop (`textwork`)
        self.limits.check(caller, chars)
        detections = None
        markups: dict[int, Markup] = {}
        if source is None:
            seen = texts
            if options.markup is not None:
                # told from the text to translate, not the markup: a page's script and
                # stylesheet outweighed its French paragraph, read as English, and it came
                # back untranslated. Parsed once, for the plan too; a long request off the
                # event loop, as it is cut below (64 pages of 60 KB held /ready 3.4 s).
                markup = options.markup

                def parsed() -> tuple[dict[int, Markup], list[str]]:
                    found = {i: parse(t, markup, options.ignore_tags) for i, t in enumerate(texts)}
                    return found, [m.words() for m in found.values()]

                markups, seen = await textwork.run(size, parsed)
            detections = await self.detect(seen)
            _check_detected(detections, translator.languages)
            sources = [d.language for d in detections]
        else:
            given = source

            def lettered() -> list[str | None]:
                return [given if needs_translation(t) else None for t in texts]

            # A regex pass over each whole text: off the loop for a long request (64 pages of
            # 60 KB held /ready 0.3 s).
            sources = await textwork.run(size, lettered)

        glossary = options.glossary
        terms = await index_of(glossary) if glossary else None
        mode = options.context or self.settings.sentence_context

        # The engine's work: texts with a language that is not already the target, each cut
        # into units (sentences, blocks of markup); units with no letters need no engine.
        def cut() -> tuple[dict[int, Plan], dict[int, list[bool]], list[Job], list[int]]:
            plans = {
                i: plan(texts[i], src, options, self.sizes, markups.get(i))
                for i, src in enumerate(sources)
                if src is not None and src != target
            }
            # Which units need the engine, decided once (a regex pass per unit).
            engine = {i: each_once(needs_translation, p.units) for i, p in plans.items()}
            # Each unit's request and cache key, computed once here (not on the event loop,
            # between the limits' check and the charge: 50,000 units held it 0.4 s).
            jobs: list[Job] = []
            charged = [len(t) for t in texts]
            for i, p in plans.items():
                src = sources[i] or ""
                model = _engine(translator, src, target, quality)
                shown = context.with_neighbours(p.units, mode)  # where `mode` asks
                first = len(jobs)
                for u, text, go in zip(p.units, shown, engine[i], strict=True):
                    if go:
                        found = terms_in(u, terms)
                        key = self.key_of(model, text, src, target, found)
                        jobs.append(Job(model, text, src, target, found, key))
                charged[i] = charge_of(texts[i], ((j.shown, j.terms) for j in jobs[first:]))
            return plans, engine, jobs, charged

        # A long request is cut off the event loop: 3 MB of short lines took it 5 s.
        plans, engine, jobs, charged = await textwork.run(size, cut)
        chars = sum(charged)  # the glossary's terms and the neighbours its prompts show too
        remaining = deadline.remaining()
        if remaining <= 0:
            self.metrics.expired.inc()
            raise DeadlineExceeded(
                f"the request's deadline of {deadline.seconds:g} s passed before it was admitted"
            )
        # Checked again, for the whole charge (the first knew only the texts): detection, the
        # glossary's index and the cut were awaited since the first check, and a key's
        # concurrent requests all passed it uncharged (ten at once went through a limit of
        # two). Nothing is awaited from here to the charge; before the cache is asked, whose
        # hits count. Only looked up here: the keys came with the cut.
        self.limits.check(caller, chars)
        # A long document holds at most max_items places; its units take turns in them. A
        # request the cache answers whole takes no place: it does no engine work.
        cached = self.cache.get_all([job.key for job in jobs]) if jobs else None
        held = min(len(jobs), self.settings.max_items)
        ticket = self.admission.admit(held, remaining) if jobs and cached is None else None
        self.limits.charge(caller, chars)  # the key's use and the admission agree, hit or not
        self.metrics.admitted.inc()
        if caller.name is not None:
            self.metrics.key_requests.labels(caller.name).inc()
            self.metrics.key_characters.labels(caller.name).inc(chars)
        # A cached text is made its Translation as the texts are put together (off the loop
        # for a long request).
        done: Iterable[Translation] = map(as_hit, cached or [])
        if ticket is not None:
            try:
                done = await self._fan_out(jobs, ticket, held, deadline)
            finally:
                ticket.release()
        results = [unchanged(t) for t in texts]
        # A text the model did not see (already in the target language) misses no term.
        missed_terms: list[list[str]] | None = [[] for _ in texts] if terms is not None else None
        answers = iter(done)
        engine_tokens = [0, 0]  # the cache's hits report tokens, but took none

        def assemble() -> None:
            for i, p in plans.items():
                parts = [
                    next(answers) if go else unchanged(u)
                    for u, go in zip(p.units, engine[i], strict=True)
                ]
                for r in parts:
                    if not r.cached:
                        engine_tokens[0] += r.input_tokens
                        engine_tokens[1] += r.output_tokens
                if missed_terms is not None and terms is not None:
                    replies = [r.text for r in compress(parts, engine[i])]
                    missed_terms[i] = missed(list(compress(p.units, engine[i])), replies, terms)
                text, repairs = p.assemble([r.text for r in parts])
                for repair in repairs:
                    self.metrics.repairs.labels(repair.split(" ", 1)[0]).inc()
                if repairs:
                    log.info("text %d: %d repairs: %s", i, len(repairs), "; ".join(repairs[:3]))
                results[i] = combine(text, parts)

        # Put back together off the event loop too, as it was cut: 64 pages of 60 KB held
        # /ready 1.8 s while their markup was rebuilt.
        await textwork.run(size, assemble)
        self.metrics.input_tokens.inc(engine_tokens[0])
        self.metrics.output_tokens.inc(engine_tokens[1])
        for r in results:
            self.metrics.translations.labels(r.finish_reason).inc()
            if r.inference_seconds > 0:  # unchanged texts and cache hits cost no engine time
                self.metrics.queue_time.observe(r.queue_seconds)
                self.metrics.inference_time.observe(r.inference_seconds)
        # Each text's own model (a list's texts may go to different ones: by detected source,
        # or a tier one pair has and another lacks); the answer names its first text's.
        models: list[str | None] = [None] * len(texts)
        for i in plans:
            if any(engine[i]):
                src = sources[i] or ""
                models[i] = _engine(translator, src, target, quality).model_for(src, target)
        answering = jobs[0].model if jobs else translator
        model = answering.model_for(next((s for s in sources if s), target), target)
        tier = self._tier(translator, model) if jobs else None
        tiers = [None if m is None else self._tier(translator, m) for m in models]
        if missed_terms is not None:
            self.metrics.glossary_missed.inc(sum(map(len, missed_terms)))
        return Translated(
            results, model, sources, detections, missed_terms, tier, models, tiers, charged
        )

    def _tier(self, translator: Translator, model: str) -> Quality:
        """The tier `model` serves: the server's own where it hosts tiers, else the
        catalogue's for the one model."""
        if is_tiered(translator):
            return translator.tier_of(model)
        return tier_of(self.settings.model)

    def key_of(
        self, engine: Translator, text: str, source: str, target: str, terms: Terms
    ) -> bytes:
        """A unit's cache key, with the form its model runs in here: its engine plan's engine,
        weights and dtype, resolved once at start and reported by /v1/info. Servers on
        different hosts share a store behind `dragoman route`, and `host` settings resolve per
        host (bfloat16 on one, float32 on another: different replies)."""
        model = engine.model_for(source, target)
        plan = engine.plans.get(model)
        form = plan.form if plan is not None else self._unplanned
        return self.cache.key(model, source, target, text, terms, form)

    async def _unit(self, job: Job, deadline: Deadline) -> Translation:
        """One unit: from the local cache, else shared with any identical one in flight: one
        lookup in the shared store and, on its miss, one engine request. A unit that joins one
        in flight counts as coalesced, not as a shared lookup (it made none: fifty identical
        units asked the store fifty times before they merged)."""
        hit = self.cache.get(job.key)
        if hit is not None:
            return hit

        async def stored_or_checked() -> Translation:
            """The shared store's translation, where there is one, else the engine's."""
            stored = await self.cache.fetch(job.key)
            if stored is not None:
                return stored
            return await self._checked(
                job.model, job.shown, job.source, job.target, job.terms, deadline, job.key
            )

        # The same unit, model, pair, terms and neighbours.
        result: Translation = await self._coalescer.run(job.key, stored_or_checked)
        return result

    async def _checked(
        self,
        translator: Translator,
        text: str,
        source: str,
        target: str,
        terms: Terms,
        deadline: Deadline,
        key: bytes,
    ) -> Translation:
        """One unit's engine request, checked; a failed reply is asked again once, with an
        instruction naming what failed, within the unit's admitted place and the deadline.
        Cached (once for every request that joined it) when the check had its say: a reply
        that passed, or the better of two that both failed (greedy, then seeded: asked again
        they come back the same, two engine requests for the same answer each time). Not one
        kept only because the deadline left no time to ask again: one client's short deadline
        would have fixed a failing reply for every later request (for a week from a shared
        store)."""
        first = await context.translate(translator, text, source, target, terms)
        if not self.settings.retry_invalid:
            self.cache.put(key, first)
            return first
        validator = Validator(self.detector)
        failure = await asyncio.to_thread(validator.check, text, first.text, target, source)
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

    async def _fan_out(
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
                    results[i] = await self._unit(job, deadline)
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


def _engine(
    translator: Translator, source: str, target: str, quality: Quality | None
) -> Translator:
    """The model that translates this pair: the hinted tier's where the server has tiers (a
    tier not loaded for the pair falls back to the pair's default), else the one model."""
    if is_tiered(translator):
        return translator.choose(source, target, quality)
    return translator


def _check_detected(detections: list[Detection], served: Collection[str]) -> None:
    """A request whose every text with letters is in none of the served languages (the
    detector, built for those, places it in none: Cyrillic where no served language is
    written in it) is refused, not answered unchanged as if it were already in the target
    language. In a batch with other texts such a one (a poll option "π", a fullwidth "ＯＫ")
    comes back unchanged and the others are translated: one item does not fail the list."""
    lettered = [i for i, d in enumerate(detections) if d.has_letters]
    unknown = [i for i in lettered if detections[i].language is None]
    if unknown and len(unknown) == len(lettered):
        raise UnsupportedLanguage(
            f"text {unknown[0]}: its language is none this server translates from "
            f"({', '.join(sorted(served))}); give the source language to translate it as one"
        )
