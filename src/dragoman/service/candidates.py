"""Candidates and a consensus pick: for a sentence, the greedy reply and k - 1 sampled ones,
each checked as any reply is (a wrong language, a runaway, a preamble drop it); of those left,
the one the others agree with most (minimum Bayes risk with chrF as the utility: a candidate
that agrees with the others is rarely the hallucinated one), ties to the model's own mean
log-probability, then to the greedy one. The runners-up, distinct, are the alternatives.

How many (`Policy.k`): a request's own `candidates`, else `quality: best`'s full k, else the
setting; `auto` makes k candidates only while a decode step of the sequences already running
plus k costs about one step of a single sequence on this engine (the probe at start, `probe`),
and only the samples done by about when the greedy one is are kept, so one client's latency
and the throughput under load stay the greedy default's."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import dataclass

from dragoman.engine.protocol import Quality, Translation, Translator, is_sampler

log = logging.getLogger(__name__)

CHEAP = 1.1
"""A batch is cheap while a decode step of it costs at most this times one sequence's."""
AUTO_PATIENCE = 0.05
"""auto's samples are kept only when done by the greedy reply's time and this share of it:
a longer sample would hold the answer past what a cheap batch costs (engine/sampling.py)."""
PROBE_STREAMS = (1, 2, 4, 8)
PROBE_TOKENS = 16
PROBE_ROUNDS = 3


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

    def __init__(self, setting: str | int, best: int) -> None:
        self.setting = setting
        self.best = best
        self.cheap: int | None = None
        """Most sequences decoding at once for about the price of one (None: not probed)."""
        self.steps: dict[int, float] = {}
        """The probe's seconds per decode step, by sequences at once."""

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
        """Measure, once, what a decode step costs on this engine: one greedy sequence, and
        (as candidates are made) one greedy and 1, 3 or 7 sampled ones at once, each the
        least of PROBE_ROUNDS tries; `cheap` is the largest of those within CHEAP of the
        greedy one."""
        timed = getattr(translator, "step_seconds", None)
        if timed is None:
            self.cheap = 1
            return
        # The first steps of each kind pay for warming up (the first sampled ones took 5-20 s).
        await timed(1, 4, False)
        await timed(2, 4, True)
        # In rounds, each size once a round, the least of each kept: one size timed alone
        # took 102 ms a step where the next round's took 67 (the server's own process shares
        # the cores).
        for _ in range(PROBE_ROUNDS):
            for streams in PROBE_STREAMS:
                took = await timed(streams, PROBE_TOKENS, streams > 1)
                self.steps[streams] = min(took, self.steps.get(streams, took))
        self.cheap = cheap_batch(self.steps)
        log.info(
            "candidates auto: a decode step of %s sequences took %s ms: up to %d at once",
            "/".join(map(str, self.steps)),
            "/".join(f"{1e3 * s:.1f}" for s in self.steps.values()),
            self.cheap,
        )

    def report(self) -> dict[str, object]:
        """What /v1/info shows."""
        return {
            "setting": self.setting,
            "best": self.best,
            "cheap_batch": self.cheap,
            "step_ms": {str(k): round(1e3 * v, 2) for k, v in self.steps.items()},
        }


def cheap_batch(steps: dict[int, float]) -> int:
    """The largest batch whose step is within CHEAP of one sequence's (1 when none is)."""
    one = steps.get(1)
    if not one:
        return 1
    return max((b for b, s in steps.items() if s <= CHEAP * one), default=1)


def pick(candidates: Sequence[Translation], failures: Sequence[str | None]) -> list[int]:
    """The candidates that passed their check, best first: by the sum of chrF against the
    others; among equals the higher mean log-probability, then the greedy one (the first).
    Duplicates come once in the order but each is a voter. [] when none passed."""
    passed = [i for i, f in enumerate(failures) if f is None]
    if len(passed) <= 1:
        return passed
    from sacrebleu.metrics import CHRF

    # chrF's F1 (beta 1), not its default F2: with recall weighted twice, of two candidates
    # each voting for the other the longer won (a sentence and the same with a phrase made
    # up: 94 against 80), and greedy-or-sample picks lost 0.47 chrF over the eval's six pairs
    # (benchmarks/results/candidates-amxbf16-2core/pick-chrf-beta2). F1 is symmetric.
    chrf = CHRF(beta=1)
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
