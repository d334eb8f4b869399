from __future__ import annotations

from dragoman.engine.prompts import InContext
from dragoman.engine.protocol import Terms, Translation
from dragoman.service import context


def test_off_or_a_single_unit_is_sent_as_it_is() -> None:
    units = ["One.", "Two."]
    assert context.with_neighbours(units, "off") is units
    assert context.with_neighbours(["Alone."], "both") == ["Alone."]
    assert not isinstance(context.with_neighbours(["Alone."], "both")[0], InContext)


def shown(unit: str) -> tuple[str, str]:
    assert isinstance(unit, InContext)
    return unit.before, unit.after


def test_previous_and_both() -> None:
    units = ["One.", "Two <g1>here</g1>.", "Three."]
    prev = context.with_neighbours(units, "previous")
    assert prev == units
    assert not isinstance(prev[0], InContext)  # the first has no sentence before it
    assert [shown(p) for p in prev[1:]] == [("One.", ""), ("Two here.", "")]
    both = context.with_neighbours(units, "both")
    assert [shown(b) for b in both] == [
        ("", "Two here."),  # a neighbour's tags are not shown
        ("One.", "Three."),
        ("Two here.", ""),
    ]


def reply(text: str, finish: str = "stop") -> Translation:
    return Translation(text, finish, 10, 5, 0.0, 0.5)


def test_a_reply_with_more_than_the_sentence_overflows() -> None:
    unit = InContext("It rained.", "We left at noon.", "")
    assert context.overflows(reply("Il a plu."), unit, "en", "fr") is None
    assert context.overflows(reply("Nous sommes partis. Il a plu."), unit, "en", "fr")
    assert context.overflows(reply("We left at noon. Il a plu"), unit, "en", "fr")
    assert context.overflows(reply("Il a plu", "length"), unit, "en", "fr")
    zh = InContext("天下雨了。", "我们中午走了。", "")
    assert context.overflows(reply("It rained."), zh, "zh", "en") is None
    assert context.overflows(reply("We left at noon. It rained."), zh, "zh", "en")


class Scripted:
    """Answers in order; records what each request was sent."""

    def __init__(self, *answers: Translation) -> None:
        self.answers = list(answers)
        self.sent: list[str] = []

    async def translate(
        self, text: str, source: str, target: str, terms: Terms = ()
    ) -> Translation:
        self.sent.append(text)
        return self.answers.pop(0)


async def test_an_overflowing_reply_is_asked_again_without_the_neighbours() -> None:
    engine = Scripted(reply("Nous sommes partis. Il a plu."), reply("Il a plu."))
    unit = InContext("It rained.", "We left.", "")
    out = await context.translate(engine, unit, "en", "fr", ())
    assert out.text == "Il a plu."
    assert isinstance(engine.sent[0], InContext)
    assert type(engine.sent[1]) is str and engine.sent[1] == "It rained."
    assert (out.input_tokens, out.output_tokens, out.inference_seconds) == (20, 10, 1.0)


async def test_a_good_reply_or_a_plain_unit_is_one_request() -> None:
    engine = Scripted(reply("Il a plu."), reply("Nous sommes partis. Il a plu."))
    out = await context.translate(engine, InContext("It rained.", "We left.", ""), "en", "fr", ())
    assert out.text == "Il a plu." and len(engine.sent) == 1
    out = await context.translate(engine, "It rained.", "en", "fr", ())
    assert out.text == "Nous sommes partis. Il a plu." and len(engine.sent) == 2
