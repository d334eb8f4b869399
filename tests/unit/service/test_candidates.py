from __future__ import annotations

import pytest

from dragoman.engine.protocol import Terms, Translation
from dragoman.metrics import Metrics
from dragoman.service.admission import Admission
from dragoman.service.cache import as_hit, made_of, pack
from dragoman.service.candidates import PROBE_TEXT, Policy, pick
from dragoman.service.deadline import Deadline
from dragoman.service.keys import Caller
from dragoman.service.quota import KeyLimits
from dragoman.service.settings import ServeSettings
from dragoman.service.translation import TranslationService


def _t(text: str, logprob: float | None = None) -> Translation:
    return Translation(text, "stop", 10, 5, 0.0, 0.01, logprob=logprob)


def test_the_pick_is_the_candidate_the_others_agree_with() -> None:
    replies = [
        _t("Le service de l'huile est servi dans le jardin."),  # greedy, the odd one
        _t("Le déjeuner est servi dans le jardin."),
        _t("Le déjeuner sera servi dans le jardin."),
        _t("Le déjeuner est servi au jardin."),
    ]
    order = pick(replies, [None] * 4)
    assert order[0] == 1
    assert sorted(order) == [0, 1, 2, 3]


def test_candidates_that_failed_their_check_are_not_picked_nor_voters() -> None:
    replies = [_t("Thank you."), _t("Merci."), _t("Thank you."), _t("Merci beaucoup.")]
    order = pick(replies, ["language", None, "language", None])
    assert order == [1, 3] or order == [3, 1]
    assert pick(replies, ["language"] * 4) == []
    assert pick(replies, ["language", None, "length", "prompt"]) == [1]


def test_copies_count_as_votes_but_come_back_once() -> None:
    replies = [_t("A"), _t("Bonjour le monde."), _t("Bonjour le monde."), _t("Salut monde.")]
    order = pick(replies, [None] * 4)
    assert order[0] == 1 and 2 not in order and len(order) == 3


def test_ties_go_to_the_higher_log_probability_then_to_the_greedy_one() -> None:
    assert pick([_t("Oui.", -0.9), _t("Non.", -0.1)], [None, None]) == [1, 0]
    assert pick([_t("Oui.", -0.5), _t("Non.", -0.5)], [None, None]) == [0, 1]
    assert pick([_t("Oui."), _t("Non.")], [None, None]) == [0, 1]


class Sampling:
    """A translator with candidates: each seed's reply is scripted per text."""

    model_name = "sampling"
    languages = ("en", "fr", "de")
    plans: dict[str, object] = {}  # noqa: RUF012 (read only)

    def __init__(self, replies: dict[str, list[str]], seconds: dict[int, float]) -> None:
        self.replies = {PROBE_TEXT: ["Merci d'être venus. La réunion est à neuf heures."] * 8}
        self.replies.update(replies)
        self.seconds = seconds
        """What k candidates take, on the test's clock (the first sampled ones: 9 s)."""
        self.now = 0.0
        self.warm = False
        self.asked: list[int] = []
        self.running = 0

    def clock(self) -> float:
        return self.now

    async def translate(
        self, text: str, source: str, target: str, terms: Terms = ()
    ) -> Translation:
        self.asked.append(1)
        self.now += self.seconds.get(1, 0.0)
        return _t(self.replies[text][0])

    async def candidates(
        self, text: str, source: str, target: str, terms: Terms, k: int, patience: float | None
    ) -> list[Translation]:
        self.asked.append(k)
        self.now += self.seconds.get(k, 0.0) if self.warm else 9.0
        self.warm = True
        return [_t(r, -0.1 * i) for i, r in enumerate(self.replies[text][:k])]

    def model_for(self, source: str, target: str) -> str:
        return self.model_name

    async def check_health(self) -> None:
        return None

    def num_unfinished_requests(self) -> int:
        return self.running


SENTENCE = "Lunch is served in the garden today."
REPLIES = {
    SENTENCE: [
        "Le service de l'huile est servi dans le jardin aujourd'hui.",
        "Le déjeuner est servi dans le jardin aujourd'hui.",
        "Lunch is served in the garden today.",  # English: dropped
        "Le déjeuner sera servi dans le jardin aujourd'hui.",
    ]
}


def _service(engine: Sampling, **settings: object) -> TranslationService:
    s = ServeSettings(**{"cache_mib": 1, **settings})
    return TranslationService(lambda: engine, s, Metrics(), Admission(0, 16), KeyLimits(0, 0))


async def _ask(service: TranslationService, **kw: object) -> Translation:
    out = await service.translate([SENTENCE], "en", "fr", Caller(None), Deadline.start(60), **kw)
    return out.results[0]


async def test_a_request_s_candidates_give_the_consensus_and_its_runners_up() -> None:
    engine = Sampling(REPLIES, {})
    service = _service(engine, candidates=1)
    got = await _ask(service, candidates=4, alternatives=3)
    assert engine.asked == [4]
    assert got.text == "Le déjeuner est servi dans le jardin aujourd'hui."
    # The English one failed its check; the hallucinated greedy one comes last.
    assert got.alternatives == (
        "Le déjeuner sera servi dans le jardin aujourd'hui.",
        "Le service de l'huile est servi dans le jardin aujourd'hui.",
    )
    assert got.output_tokens == 4 * 5  # every candidate's work is counted
    # Cached with its alternatives: asked again, no engine work.
    again = await _ask(service, candidates=4, alternatives=2)
    assert engine.asked == [4] and again.alternatives == got.alternatives[:2]
    assert again.text == got.text


async def test_a_cached_greedy_answer_does_not_answer_a_request_for_more_candidates() -> None:
    engine = Sampling(REPLIES, {})
    service = _service(engine, candidates=1)
    first = await _ask(service)
    assert engine.asked == [1] and first.text.startswith("Le service de l'huile")
    better = await _ask(service, quality="best")
    assert engine.asked == [1, 4] and better.text.startswith("Le déjeuner est")
    assert (await _ask(service)).text == better.text  # the better answer is kept


async def test_the_setting_and_quality_best_choose_k() -> None:
    engine = Sampling(REPLIES, {})
    service = _service(engine, candidates=2, cache_mib=0)
    await _ask(service)
    await _ask(service, quality="best")
    await _ask(service, alternatives=3)
    assert engine.asked == [2, 4, 4]


async def test_auto_makes_candidates_only_where_they_cost_about_one_reply_and_have_room() -> None:
    engine = Sampling(REPLIES, {1: 2.0, 2: 2.6, 4: 2.1, 8: 2.1})  # a 2-core CPU
    cpu = Policy("auto", 4, engine.clock)
    await cpu.probe(engine)
    assert cpu.cheap == 1 and cpu.k(engine, None, None, 0).k == 1
    assert engine.asked == [2, 1, 2, 1, 2]  # warm-up, then 2 in turns; 4 not tried past a miss
    assert cpu.report()["probe_ms"] == {"1": 2000.0, "2": 2600.0}
    engine = Sampling(REPLIES, {1: 2.0, 2: 2.05, 4: 2.15, 8: 2.5})
    middle = Policy("auto", 4, engine.clock)
    await middle.probe(engine)
    assert middle.cheap == 4
    engine = Sampling(REPLIES, {1: 1.0, 2: 1.01, 4: 1.03, 8: 1.05})  # a GPU
    gpu = Policy("auto", 4, engine.clock)
    await gpu.probe(engine)
    assert gpu.cheap == 8
    assert gpu.k(engine, None, None, 0).k == 4  # at most the `best` k
    engine.running = 5
    assert gpu.k(engine, None, None, 0).k == 2  # three places left
    engine.running = 7
    assert gpu.k(engine, None, None, 0).k == 1  # under load: greedy
    assert gpu.k(engine, None, "best", 0).k == 4  # asked for, whatever it costs
    unprobed = Policy("auto", 4)
    assert unprobed.k(engine, None, None, 0).k == 1


def test_an_entry_keeps_its_candidates_and_alternatives() -> None:
    value = Translation(
        "Bonjour\x1f 1",
        "stop",
        12,
        7,
        0.0,
        0.1,
        candidates=4,
        alternatives=("Salut 3", "", "é\x1f"),
    )
    entry = pack(value)
    hit = as_hit(entry)
    assert (hit.text, hit.alternatives, hit.candidates) == (value.text, value.alternatives, 4)
    assert (hit.input_tokens, hit.output_tokens, hit.cached) == (12, 7, True)
    assert made_of(entry) == 4
    old = "12 7\x1fBonjour"  # an entry of a server before candidates
    assert as_hit(old).text == "Bonjour" and made_of(old) == 1
    with pytest.raises(ValueError):
        as_hit("12 7 1 40\x1fshort")
