"""A file's segments through the translation service (fake engine): all of them in flight at
once in calls grouped by markup, progress as calls finish, long plain text cut and joined, a
refused call asked again, a failure or a cancel aborting the rest in the engine."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from dragoman.errors import EngineFailed, TextTooLong
from dragoman.files.base import Segment
from dragoman.jobs.runner import Ask, _Unit, calls_of, cut, translate_segments
from dragoman.service.keys import Caller
from tests.fakes import FakeTranslator
from tests.unit.jobs.conftest import make_service, until

ASK = Ask("en", "fr")


def test_cut_pieces_join_back_and_fit() -> None:
    text = "one line\nanother line that is longer\n\n" + "word " * 40 + "x" * 90
    for limit in (10, 25, 64, 1000):
        pieces = cut(text, limit)
        assert "".join(pieces) == text
        assert all(0 < len(p) <= limit for p in pieces)
    assert cut("line one\nline two\n", 12) == ["line one\n", "line two\n"]
    assert cut("", 10) == []


def test_calls_are_grouped_by_markup_and_bounded() -> None:
    units = [_Unit(i, "t" * 10, None if i % 3 else "xml") for i in range(10)]
    calls = list(calls_of(units, max_items=3, max_chars=25))
    assert all(len({u.markup for u in call}) == 1 for call in calls)
    assert all(len(call) <= 2 for call in calls)  # 3 texts of 10 pass 25 characters
    assert sorted(u.segment for call in calls for u in call) == list(range(10))
    assert [len(c) for c in calls_of(units, 4, 1000)] == [4, 4, 2]  # xml: 4, plain: 6


async def test_every_segment_is_in_flight_at_once_and_progress_follows_the_calls(
    fake: FakeTranslator,
) -> None:
    service = make_service(fake)  # max_items 4
    segments = [Segment(f"Sentence number {i}.") for i in range(7)] + [
        Segment("A <g1>bold</g1> word.", "xml"),
        Segment("An <b>html</b> one.", "html"),
        Segment("   "),  # blank: no engine work, kept
    ]
    fake.gate = asyncio.Event()
    seen: list[tuple[int, int]] = []

    async def progress(done: int, billed: int) -> None:
        seen.append((done, billed))

    task = asyncio.create_task(translate_segments(service, segments, ASK, Caller(), progress))
    await until(lambda: fake.running == 9)  # 4 calls (4 + 3 plain, 1 xml, 1 html), all at once
    assert seen == []
    fake.gate.set()
    texts, billed = await task
    assert texts[:7] == [f"[fr] Sentence number {i}." for i in range(7)]
    assert texts[7] == "[fr] A <g1>bold</g1> word."
    assert texts[8].startswith("[fr] An ") and "<b>" in texts[8]
    assert texts[9] == "   "
    assert billed == sum(len(s.text) for s in segments[:9])
    assert len(seen) == 4
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)
    assert seen[-1] == (10, billed)


async def test_a_long_plain_segment_is_cut_translated_and_joined(fake: FakeTranslator) -> None:
    service = make_service(fake, max_text_chars=60)
    lines = [f"Line {i} of a long plain text file." for i in range(10)]
    text = "\n".join(lines) + "\n"
    texts, _ = await translate_segments(
        service, [Segment(text)], ASK, Caller(), lambda *_: asyncio.sleep(0)
    )
    assert texts == ["\n".join(f"[fr] {line}" for line in lines) + "\n"]


async def test_a_jobs_calls_are_as_many_as_the_server_admits(fake: FakeTranslator) -> None:
    service = make_service(fake, admitted=8)  # room for two calls of four at a time
    segments = [Segment(f"Text {i}.") for i in range(20)]
    fake.gate = asyncio.Event()
    task = asyncio.create_task(
        translate_segments(service, segments, ASK, Caller(), lambda *_: asyncio.sleep(0))
    )
    await until(lambda: fake.running == 8)
    fake.gate.set()
    texts, _ = await task
    assert texts == [f"[fr] Text {i}." for i in range(20)]
    assert fake.peak == 8


async def test_a_call_refused_for_now_waits_and_is_asked_again(fake: FakeTranslator) -> None:
    service = make_service(fake, admitted=4)
    held = service.admission.admit(2)  # another request holds half the places
    asked = 0
    translate = service.translate

    async def counted(*args: Any, **kwargs: Any) -> Any:
        nonlocal asked
        asked += 1
        return await translate(*args, **kwargs)

    service.translate = counted  # type: ignore[method-assign]
    segments = [Segment(f"Text {i}.") for i in range(4)]
    task = asyncio.create_task(
        translate_segments(service, segments, ASK, Caller(), lambda *_: asyncio.sleep(0))
    )
    await until(lambda: asked == 1)
    assert fake.started == 0  # refused: 2 + 4 places are past the bound of 4
    held.release()
    texts, _ = await asyncio.wait_for(task, timeout=10)  # Retry-After is a second or two
    assert texts == [f"[fr] Text {i}." for i in range(4)] and asked == 2


async def test_a_failed_call_aborts_the_others_in_the_engine(fake: FakeTranslator) -> None:
    service = make_service(fake)
    fake.max_words = 3
    fake.gate = asyncio.Event()  # the others wait in the engine, aborted when one fails
    segments = [Segment("short one"), Segment("another short"), Segment("far too many words here")]
    with pytest.raises(TextTooLong):
        await translate_segments(service, segments, ASK, Caller(), lambda *_: asyncio.sleep(0))
    assert fake.cancelled == 2 and fake.running == 0


async def test_cancelling_aborts_every_engine_request(fake: FakeTranslator) -> None:
    service = make_service(fake)
    fake.gate = asyncio.Event()
    segments = [Segment(f"Text {i}.") for i in range(6)]
    task = asyncio.create_task(
        translate_segments(service, segments, ASK, Caller(), lambda *_: asyncio.sleep(0))
    )
    await until(lambda: fake.running == 6)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert fake.cancelled == 6 and fake.running == 0


async def test_an_engine_error_is_the_jobs_error(fake: FakeTranslator) -> None:
    service = make_service(fake)

    async def failing(*_: object, **__: object) -> object:
        raise EngineFailed("the engine failed this one")

    fake.translate = failing  # type: ignore[method-assign]
    with pytest.raises(EngineFailed, match="failed this one"):
        await translate_segments(
            service, [Segment("Hello there.")], ASK, Caller(), lambda *_: asyncio.sleep(0)
        )


async def test_without_a_source_the_documents_language_is_told_once(
    fake: FakeTranslator,
) -> None:
    service = make_service(fake)
    seen: list[str] = []
    translate = fake.translate

    async def recording(text: str, source: str, target: str, terms: object = ()) -> object:
        seen.append(source)
        return await translate(text, source, target)

    fake.translate = recording  # type: ignore[method-assign]
    segments = [
        Segment("The committee will meet again next week to discuss the budget."),
        Segment("OK"),  # alone it could be read as anything
        Segment("Everyone agreed that the report should be published on Monday."),
    ]
    texts, _ = await translate_segments(
        service, segments, Ask(None, "fr"), Caller(), lambda *_: asyncio.sleep(0)
    )
    assert seen and set(seen) == {"en"}
    assert texts[0].startswith("[fr] ")
