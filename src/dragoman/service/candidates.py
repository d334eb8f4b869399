"""Candidates and a consensus pick: for a sentence, the greedy reply and k - 1 sampled ones,
each checked as any reply is (a wrong language, a runaway, a preamble drop it); of those left,
the one the others agree with most (minimum Bayes risk with chrF as the utility: a candidate
that agrees with the others is rarely the hallucinated one), ties to the model's own mean
log-probability, then to the greedy one. The runners-up, distinct, are the alternatives.

How many (`Policy.k`): a request's own `candidates`, else `quality: best`'s full k, else the
setting; `auto` makes k candidates only where k of them cost about what one greedy reply
does on this engine (the probe at start, `probe`, timing both as auto makes them), and only
while the engine has that room beside the sequences it is running; and of the samples only
those done by about when the greedy one is are kept. So one client's latency and the
throughput under load stay the greedy default's."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import cast

from dragoman.engine.protocol import Quality, Sampler, Translation, Translator, is_sampler

log = logging.getLogger(__name__)

CHEAP = 1.1
"""A batch is cheap while a decode step of it costs at most this times one sequence's."""
AUTO_PATIENCE = 0.05
"""auto's samples are kept only when done by the greedy reply's time and this share of it:
a longer sample would hold the answer past what a cheap batch costs (engine/sampling.py)."""
PROBE_STREAMS = (1, 2, 4, 8)
PROBE_ROUNDS = 2
PROBE_TEXT = "Thank you for coming today. The meeting starts at nine."


@dataclass(frozen=True)
class Wanted:
    """How many candidates a unit gets, and why (the metric's label)."""

    k: int
    why: str

    @property
    def patience(self) -> float | None:
        """How long its samples may run past the greedy one (None: to their end)."""
        return AUTO_PATIENCE if self.why == "auto" else None


class Policy:
    """The number of candidates of each unit sent to the engine."""

    def __init__(
        self, setting: str | int, best: int, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._clock = clock
        self.setting = setting
        self.best = best
        self.cheap: int | None = None
        """Most candidates made for about the price of one reply (None: not probed)."""
        self.steps: dict[int, float] = {}
        """The probe's seconds for its sentence, by candidates made (1: the greedy reply)."""

    def need(self, asked: int | None, quality: Quality | None, alternatives: int) -> int:
        """The fewest candidates a cached answer must have been made from to answer this
        request: what it asked for, `quality: best`'s, or its alternatives and the pick (1:
        whatever the server chose)."""
        need = asked or (self.best if quality == "best" else 1)
        return max(need, alternatives + 1 if alternatives else 1)

    def k(
        self, translator: Translator, asked: int | None, quality: Quality | None, alternatives: int
    ) -> Wanted:
        """The candidates for a unit of a request that asked `asked` (None: the server's
        choice), with the `quality` hint, wanting `alternatives` runners-up."""
        running = translator.num_unfinished_requests()
        if not is_sampler(translator):
            return Wanted(1, "setting")
        if asked is not None:
            wanted = Wanted(asked, "request")
        elif quality == "best":
            wanted = Wanted(self.best, "best")
        elif self.setting != "auto":
            wanted = Wanted(int(self.setting), "setting")
        else:
            wanted = Wanted(self.spare(running), "auto")
        if alternatives and wanted.k < alternatives + 1:
            return Wanted(alternatives + 1, "request")
        return wanted

    def spare(self, running: int) -> int:
        """auto's k with `running` sequences in the engine: the most (a power of two) that fit
        in the cheap batch beside them, else 1."""
        room = (self.cheap or 1) - running
        k = 1
        while k * 2 <= min(room, self.best):
            k *= 2
        return k

    async def probe(self, translator: Translator) -> None:
        """Measure, once, what auto's candidates cost on this engine, as it makes them: one
        sentence translated greedy, and as 2, 4 and 8 candidates with auto's patience, each
        the least of PROBE_ROUNDS tries taken in turns; `cheap` is the most candidates whose
        answer came within CHEAP of the greedy one's (a larger k is tried only while the
        smaller passed). A decode step's cost alone said 2 where answers took 1.2-1.6x
        (benchmarks/results/candidates-amxbf16-2core/cost-step-probe): the samples' own
        prompts past the shared prefix, their log-probabilities and the check of each."""
        sampling = is_sampler(translator)  # a bool: `translator` stays a Translator here
        if not sampling:
            self.cheap = 1
            return
        sampler = cast(Sampler, translator)
        served = translator.languages
        source = "en" if "en" in served else served[0]
        target = next(c for c in ("fr", "de", "es", *served) if c in served and c != source)
        # The first sampled requests pay for warming up (5-20 s here); not timed.
        await sampler.candidates(PROBE_TEXT, source, target, (), 2, None)

        async def timed(k: int) -> float:
            started = self._clock()
            if k == 1:
                await translator.translate(PROBE_TEXT, source, target)
            else:
                await sampler.candidates(PROBE_TEXT, source, target, (), k, AUTO_PATIENCE)
            return self._clock() - started

        cheap = 1
        for k in PROBE_STREAMS[1:]:
            for _ in range(PROBE_ROUNDS):
                for each in (1, k):
                    took = await timed(each)
                    self.steps[each] = min(took, self.steps.get(each, took))
            if self.steps[k] > CHEAP * self.steps[1]:
                break
            cheap = k
        self.cheap = cheap
        log.info(
            "candidates auto: a sentence took %s ms as %s candidates: up to %d at once",
            "/".join(f"{1e3 * s:.0f}" for s in self.steps.values()),
            "/".join(map(str, self.steps)),
            self.cheap,
        )

    def report(self) -> dict[str, object]:
        """What /v1/info shows."""
        return {
            "setting": self.setting,
            "best": self.best,
            "cheap_batch": self.cheap,
            "probe_ms": {str(k): round(1e3 * v, 1) for k, v in self.steps.items()},
        }


def pick(candidates: Sequence[Translation], failures: Sequence[str | None]) -> list[int]:
    """The candidates that passed their check, best first: by the sum of chrF against the
    others; among equals the higher mean log-probability, then the greedy one (the first).
    Duplicates come once in the order but each is a voter. [] when none passed."""
    passed = [i for i, f in enumerate(failures) if f is None]
    if len(passed) <= 1:
        return passed
    from sacrebleu.metrics import CHRF

    # chrF as sacrebleu's default (F2, recall weighted twice), as the eval scores. Its F1,
    # symmetric, was measured too and did no better: -0.22 against +0.19 at k = 4 over the
    # eval's six pairs (benchmarks/results/candidates-amxbf16-2core/pick-chrf-beta*).
    chrf = CHRF()
    texts = [candidates[i].text for i in passed]
    score: dict[str, float] = {}
    for a in dict.fromkeys(texts):
        voters = list(texts)
        voters.remove(a)  # a candidate does not vote for itself; its copies do
        score[a] = sum(chrf.sentence_score(a, [b]).score for b in voters)
    seen: set[str] = set()
    order: list[int] = []

    def rank(i: int) -> tuple[float, float, int]:
        logprob = candidates[i].logprob
        return (-round(score[candidates[i].text], 6), -(logprob or float("-inf")), i)

    ranked = sorted(passed, key=rank)
    for i in ranked:
        if candidates[i].text not in seen:
            seen.add(candidates[i].text)
            order.append(i)
    return order


async def probe_when_ready(policy: Policy, ready: asyncio.Event, translator: object) -> None:
    """Once the engine is up, the probe (for `auto`); a failure leaves auto at 1."""
    await ready.wait()
    try:
        await policy.probe(translator())  # type: ignore[operator]
    except Exception:
        policy.cheap = 1
        log.exception("candidates auto: the probe failed; auto makes 1 candidate")
