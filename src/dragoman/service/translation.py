"""The one translation service every API surface calls, in named stages (`translate`):
refuse while draining and check the request against the model, settings and the caller's
per-key limits; find each text's language (`_languages`: given, or detected per text); cut the
texts into units (`_cut`: sentences, blocks of markup, each unit's engine request, cache key
and charge: the texts and what their prompts show beside them, once here for every surface);
answer the units (`_answer`: all from the cache, or admitted whole or refused by admission
control, charged, then run concurrently in the engine by `units.Units` within the request's
deadline, an identical unit in flight joined); put each text back together (`_reassemble`);
count (`_counted`). Where the server hosts quality tiers, the request's `quality` hint picks the
model of each pair. Texts with no letters, and texts already in the target language, come back
as they are, with no engine work. Surfaces map its results and errors to their shapes."""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass, replace
from itertools import compress
from typing import TypeVar

from dragoman.detect import Detection, LanguageDetector
from dragoman.detect import has_language as needs_translation
from dragoman.engine.protocol import (
    Quality,
    Terms,
    Translation,
    Translator,
    is_tiered,
)
from dragoman.errors import (
    DeadlineExceeded,
    TextTooLong,
    TooManyItems,
    UnsupportedLanguage,
)
from dragoman.languages import check_code, check_pair
from dragoman.metrics import Metrics
from dragoman.models.catalogue import tier_of
from dragoman.service import context, textwork
from dragoman.service.admission import Admission
from dragoman.service.cache import TranslationCache, as_hit, settings_salt
from dragoman.service.cache_store import SharedStore
from dragoman.service.candidates import Policy, probe_when_ready
from dragoman.service.deadline import Deadline
from dragoman.service.documents import PLAIN, Plan, Sizes, TextOptions, parse, plan
from dragoman.service.glossary import TermIndex, index_of, missed, terms_in
from dragoman.service.keys import Caller
from dragoman.service.quota import KeyLimits
from dragoman.service.settings import ServeSettings
from dragoman.service.textwork import each_once
from dragoman.service.translated import (
    Translated,
    charge_of,
    combine,
    unchanged,
    with_alternatives,
)
from dragoman.service.units import Job, Units
from dragoman.text.markup import Markup

log = logging.getLogger(__name__)

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class _Ask:
    """A request as the stages share it."""

    texts: list[str]
    target: str
    options: TextOptions
    quality: Quality | None
    translator: Translator
    size: int
    """Its characters: past `textwork.CUT_IN_THREAD`, text work runs off the event loop."""
    candidates: int | None = None
    """The candidates of each sentence it asked for (None: the server's choice)."""
    alternatives: int = 0
    """The runners-up it wants for each text."""


@dataclass(frozen=True, slots=True)
class _Cut:
    """The texts cut into units: the plan of each text to translate, which of its units
    need the engine, those units' engine requests in order, and each text's charge."""

    plans: dict[int, Plan]
    engine: dict[int, list[bool]]
    jobs: list[Job]
    charged: list[int]


@dataclass(frozen=True, slots=True)
class _Whole:
    """The texts put back together."""

    results: list[Translation]
    missed_terms: list[list[str]] | None
    input_tokens: int
    output_tokens: int


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
        ready: asyncio.Event | None = None,
    ) -> None:
        """`ready` is set once the engine is up: `candidates = auto` then measures it."""
        self._translator = translator  # raises EngineNotReady / EngineDead
        self.settings = settings
        self.metrics = metrics
        self.admission = admission
        self.limits = limits
        self.sizes = Sizes(settings.max_unit_chars, settings.min_split_chars)
        store = None
        if settings.cache_url:
            store = SharedStore(settings.cache_url, settings.cache_ttl, metrics)
        salt = settings_salt(settings)
        self.cache = TranslationCache(settings.cache_mib * 2**20, salt, metrics, store)
        self.candidates = Policy(settings.candidates, settings.candidates_best)
        self.units = Units(
            self.cache, metrics, settings.retry_invalid, lambda: self.detector, self.candidates
        )
        self._ready = ready
        self._probe: asyncio.Task[None] | None = None
        # A model's form when its translator has no plan for it (echo; the Ray ingress, whose
        # engines run elsewhere): the settings as given.
        self._unplanned = f"{settings.weights}/{settings.gguf_weights}/{settings.dtype}"

    async def __aenter__(self) -> TranslationService:
        if self._ready is not None and self.settings.candidates == "auto":
            probing = probe_when_ready(self.candidates, self._ready, self._translator)
            self._probe = asyncio.create_task(probing, name="candidates-probe")
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._probe is not None:
            self._probe.cancel()
            await asyncio.gather(self._probe, return_exceptions=True)
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
        candidates: int | None = None,
        alternatives: int = 0,
    ) -> Translated:
        """Translate `texts` from `source` (None: detect each text's) into `target`, on the
        `quality` tier's model where the server hosts tiers (None: each pair's default), from
        `candidates` per sentence (None: the server's choice; service/candidates.py), with
        up to `alternatives` runners-up per text (`Translation.alternatives`).
        In stages: check, find each text's language, cut the texts into units, answer the
        units (cache, admission, engine), put the texts back together, count."""
        self.admission.check_open()  # a draining server says so before anything else
        translator = self._translator()
        self._check(texts, source, target, translator)
        # A long request's text work runs off the event loop (`textwork`).
        size = sum(len(t) for t in texts)
        ask = _Ask(texts, target, options, quality, translator, size, candidates, alternatives)
        self.limits.check(caller, ask.size)
        sources, detections, markups = await self._languages(ask, source)
        terms = await index_of(options.glossary) if options.glossary else None
        # A long request is cut off the event loop: 3 MB of short lines took it 5 s.
        cut = await textwork.run(ask.size, lambda: self._cut(ask, sources, markups, terms))
        need = self.candidates.need(candidates, quality, alternatives)
        done = await self._answer(cut, caller, deadline, need)
        # Put back together off the event loop too, as it was cut: 64 pages of 60 KB held
        # /ready 1.8 s while their markup was rebuilt.
        whole = await textwork.run(ask.size, lambda: self._reassemble(ask, cut, done, terms))
        return self._counted(ask, sources, detections, cut, whole)

    async def _languages(
        self, ask: _Ask, source: str | None
    ) -> tuple[list[str | None], list[Detection] | None, dict[int, Markup]]:
        """Each text's source language: the given one, or detected per text; None for a text
        with no letters (it needs no engine). Markup parsed for detection is kept for the cut."""
        texts, options = ask.texts, ask.options
        markups: dict[int, Markup] = {}
        if source is None:
            seen = texts
            if options.markup is not None:
                # told from the text to translate, not the markup: a page's script and
                # stylesheet outweighed its French paragraph, read as English, and it came
                # back untranslated. Parsed once, for the cut too; a long request off the
                # event loop, as it is cut (64 pages of 60 KB held /ready 3.4 s).
                markup = options.markup

                def parsed() -> tuple[dict[int, Markup], list[str]]:
                    found = {i: parse(t, markup, options.ignore_tags) for i, t in enumerate(texts)}
                    return found, [m.words() for m in found.values()]

                markups, seen = await textwork.run(ask.size, parsed)
            detections = await self.detect(seen)
            _check_detected(detections, ask.translator.languages)
            return [d.language for d in detections], detections, markups

        def lettered() -> list[str | None]:
            return [source if needs_translation(t) else None for t in texts]

        # A regex pass over each whole text: off the loop for a long request (64 pages of
        # 60 KB held /ready 0.3 s).
        return await textwork.run(ask.size, lettered), None, markups

    def _cut(
        self,
        ask: _Ask,
        sources: list[str | None],
        markups: dict[int, Markup],
        terms: TermIndex | None,
    ) -> _Cut:
        """The engine's work: texts with a language that is not already the target, each cut
        into units (sentences, blocks of markup); units with no letters need no engine. Each
        unit's request and cache key computed once here (not on the event loop, between the
        limits' check and the charge: 50,000 units held it 0.4 s)."""
        texts, target = ask.texts, ask.target
        mode = ask.options.context or self.settings.sentence_context
        plans = {
            i: plan(texts[i], src, ask.options, self.sizes, markups.get(i))
            for i, src in enumerate(sources)
            if src is not None and src != target
        }
        # Which units need the engine, decided once (a regex pass per unit).
        engine = {i: each_once(needs_translation, p.units) for i, p in plans.items()}
        jobs: list[Job] = []
        charged = [len(t) for t in texts]
        for i, p in plans.items():
            src = sources[i] or ""
            model = _engine(ask.translator, src, target, ask.quality)
            shown = context.with_neighbours(p.units, mode)  # where `mode` asks
            first = len(jobs)
            for u, text, go in zip(p.units, shown, engine[i], strict=True):
                if go:
                    found = terms_in(u, terms)
                    key = self.key_of(model, text, src, target, found)
                    job = Job(model, text, src, target, found, key)
                    if ask.candidates or ask.quality or ask.alternatives:
                        job = replace(
                            job,
                            asked=ask.candidates,
                            quality=ask.quality,
                            alternatives=ask.alternatives,
                        )
                    jobs.append(job)
            charged[i] = charge_of(texts[i], ((j.shown, j.terms) for j in jobs[first:]))
        return _Cut(plans, engine, jobs, charged)

    async def _answer(
        self, cut: _Cut, caller: Caller, deadline: Deadline, need: int = 1
    ) -> Iterable[Translation]:
        """Every unit's translation, in order: all from the cache, or admitted and fanned out
        to the engine (each unit from the cache where it can). Charges the caller's key."""
        jobs = cut.jobs
        chars = sum(cut.charged)  # the glossary's terms and the neighbours its prompts show too
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
        cached = self.cache.get_all([job.key for job in jobs], need) if jobs else None
        held = min(len(jobs), self.settings.max_items)
        ticket = self.admission.admit(held, remaining) if jobs and cached is None else None
        self.limits.charge(caller, chars)  # the key's use and the admission agree, hit or not
        self.metrics.admitted.inc()
        if caller.name is not None:
            self.metrics.key_requests.labels(caller.name).inc()
            self.metrics.key_characters.labels(caller.name).inc(chars)
        if ticket is None:
            # A cached text is made its Translation as the texts are put together (off the
            # loop for a long request).
            return map(as_hit, cached or [])
        try:
            return await self.units.fan_out(jobs, ticket, held, deadline)
        finally:
            ticket.release()

    def _reassemble(
        self, ask: _Ask, cut: _Cut, done: Iterable[Translation], terms: TermIndex | None
    ) -> _Whole:
        """Each text put back together from its units' answers (an unchanged text as it came),
        with the glossary terms each missed and the engine's tokens (not the cache's)."""
        texts = ask.texts
        results = [unchanged(t) for t in texts]
        # A text the model did not see (already in the target language) misses no term.
        missed_terms: list[list[str]] | None = [[] for _ in texts] if terms is not None else None
        answers = iter(done)
        tokens = [0, 0]  # the cache's hits report tokens, but took none
        for i, p in cut.plans.items():
            engine = cut.engine[i]
            parts = [
                next(answers) if go else unchanged(u) for u, go in zip(p.units, engine, strict=True)
            ]
            for r in parts:
                if not r.cached:
                    tokens[0] += r.input_tokens
                    tokens[1] += r.output_tokens
            if missed_terms is not None and terms is not None:
                replies = [r.text for r in compress(parts, engine)]
                missed_terms[i] = missed(list(compress(p.units, engine)), replies, terms)
            text, repairs = p.assemble([r.text for r in parts])
            for repair in repairs:
                self.metrics.repairs.labels(repair.split(" ", 1)[0]).inc()
            if repairs:
                log.info("text %d: %d repairs: %s", i, len(repairs), "; ".join(repairs[:3]))
            results[i] = combine(text, parts)
            if ask.alternatives:
                results[i] = with_alternatives(results[i], p, parts, ask.alternatives)
        return _Whole(results, missed_terms, tokens[0], tokens[1])

    def _counted(
        self,
        ask: _Ask,
        sources: list[str | None],
        detections: list[Detection] | None,
        cut: _Cut,
        whole: _Whole,
    ) -> Translated:
        """The answer, with the metrics it adds up to and the model(s) and tier(s) that made
        it."""
        self.metrics.input_tokens.inc(whole.input_tokens)
        self.metrics.output_tokens.inc(whole.output_tokens)
        for r in whole.results:
            self.metrics.translations.labels(r.finish_reason).inc()
            if r.inference_seconds > 0:  # unchanged texts and cache hits cost no engine time
                self.metrics.queue_time.observe(r.queue_seconds)
                self.metrics.inference_time.observe(r.inference_seconds)
        translator, target, quality = ask.translator, ask.target, ask.quality
        # Each text's own model (a list's texts may go to different ones: by detected source,
        # or a tier one pair has and another lacks); the answer names its first text's.
        models: list[str | None] = [None] * len(ask.texts)
        for i in cut.plans:
            if any(cut.engine[i]):
                src = sources[i] or ""
                models[i] = _engine(translator, src, target, quality).model_for(src, target)
        answering = cut.jobs[0].model if cut.jobs else translator
        model = answering.model_for(next((s for s in sources if s), target), target)
        tier = self._tier(translator, model) if cut.jobs else None
        tiers = [None if m is None else self._tier(translator, m) for m in models]
        if whole.missed_terms is not None:
            self.metrics.glossary_missed.inc(sum(map(len, whole.missed_terms)))
        return Translated(
            whole.results,
            model,
            sources,
            detections,
            whole.missed_terms,
            tier,
            models,
            tiers,
            cut.charged,
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
