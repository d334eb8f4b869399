"""A file's segments through the translation service, all of them in flight together: grouped
by markup (plain text, XML fragments, HTML), each group cut into calls of at most --max-items
texts and a bounded number of characters, and the calls sent together, as many at once as the
server admits (the service sends each call's sentences to the engine concurrently, so the whole
document shares the engine's batch; a call past the admission bound would only be refused).
A call the server refuses for now (full, the key's minute used up) waits its Retry-After and
asks again; the job gives up only when nothing of it finished for a whole --request-timeout.

A plain-text segment longer than a call's characters (a long .txt file is one segment) is cut
at line breaks (else at spaces) into pieces translated as texts of their own and joined again."""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, replace

from dragoman.engine.protocol import Quality
from dragoman.errors import DeadlineUnmeetable, DragomanError, Overloaded, RateLimited
from dragoman.files.base import Segment, SegmentMarkup
from dragoman.service.deadline import Deadline
from dragoman.service.documents import PLAIN, TextOptions
from dragoman.service.keys import Caller
from dragoman.service.translation import TranslationService

_TAG = re.compile(r"<[^>]{0,200}>")
DETECT_CHARS = 20_000
"""Characters of a document its language is told from (when no source is given)."""
RETRYABLE = (Overloaded, RateLimited, DeadlineUnmeetable)
MIN_WAIT = 0.2

Progress = Callable[[int, int], Awaitable[None]]
"""Called as calls finish: (segments done, characters billed so far)."""


@dataclass(frozen=True)
class Ask:
    """What a job asks of the service, beside its segments."""

    source: str | None
    target: str
    options: TextOptions = PLAIN
    quality: Quality | None = None


@dataclass(frozen=True)
class _Unit:
    segment: int
    text: str
    markup: SegmentMarkup | None


def cut(text: str, limit: int) -> list[str]:
    """`text` in pieces of at most `limit` characters that join back to it: at line breaks
    where a line fits, else at the last space, else where the length falls."""
    pieces: list[str] = []
    while len(text) > limit:
        head = text[:limit]
        at = head.rfind("\n") + 1 or head.rfind(" ") + 1 or limit
        pieces.append(text[:at])
        text = text[at:]
    return [*pieces, text] if text else pieces


def units_of(segments: list[Segment], limit: int) -> list[_Unit]:
    """The texts to send: each segment with text in it, a long plain one cut (the module's
    doc); a blank segment needs no call and is kept as it is."""
    units = []
    for i, s in enumerate(segments):
        if not s.text.strip():
            continue
        pieces = cut(s.text, limit) if s.markup is None else [s.text]
        units += [_Unit(i, p, s.markup) for p in pieces]
    return units


def calls_of(units: list[_Unit], max_items: int, max_chars: int) -> Iterator[list[_Unit]]:
    """`units` grouped by markup, each group in calls of at most `max_items` texts and
    `max_chars` characters (a text longer than that is a call of its own)."""
    groups: dict[SegmentMarkup | None, list[_Unit]] = {}
    for u in units:
        groups.setdefault(u.markup, []).append(u)
    for group in groups.values():
        call: list[_Unit] = []
        chars = 0
        for u in group:
            if call and (len(call) >= max_items or chars + len(u.text) > max_chars):
                yield call
                call, chars = [], 0
            call.append(u)
            chars += len(u.text)
        if call:
            yield call


async def document_language(service: TranslationService, segments: list[Segment]) -> str | None:
    """The language most of the document is in (None when it cannot be told): one source for
    all its segments, so a short one ("OK", a name) is not taken for another language."""
    sample: list[str] = []
    size = 0
    for s in segments:
        text = _TAG.sub(" ", s.text) if s.markup else s.text
        sample.append(text[: DETECT_CHARS - size])
        size += len(sample[-1])
        if size >= DETECT_CHARS:
            break
    (found,) = await service.detect(["\n".join(sample)])
    return found.language


async def translate_segments(
    service: TranslationService,
    segments: list[Segment],
    ask: Ask,
    caller: Caller,
    progress: Progress,
) -> tuple[list[str], int]:
    """Each segment's translation, in order, and the characters billed for them all."""
    settings = service.settings
    source = ask.source
    if source is None:
        source = await document_language(service, segments)
        if source == ask.target:
            source = None  # each text's own: those already in the target come back as they are
    room = service.limits.room(caller)
    max_chars = max(1, min(settings.max_text_chars, room if room is not None else 1 << 62))

    def plan() -> tuple[list[_Unit], list[list[_Unit]]]:
        units = units_of(segments, max_chars)
        return units, list(calls_of(units, settings.max_items, max_chars))

    # Off the event loop: a file may hold 100,000 segments.
    units, calls = await asyncio.to_thread(plan)
    outs: dict[int, str] = {}
    left = [0] * len(segments)  # each segment's units not yet translated
    for u in units:
        left[u.segment] += 1
    done = sum(1 for n in left if n == 0)
    billed = 0
    last_progress = time.monotonic()

    async def run(call: list[_Unit]) -> None:
        nonlocal done, billed, last_progress
        texts = [u.text for u in call]
        options = replace(ask.options, markup=call[0].markup)
        while True:
            deadline = Deadline.start(settings.request_timeout)
            try:
                out = await service.translate(
                    texts, source, ask.target, caller, deadline, options, ask.quality
                )
                break
            except RETRYABLE as exc:
                wait = max(MIN_WAIT, float(exc.retry_after or 1))
                if time.monotonic() + wait - last_progress > settings.request_timeout:
                    raise
                await asyncio.sleep(wait)
        for u, r in zip(call, out.results, strict=True):
            outs[id(u)] = r.text
            left[u.segment] -= 1
            done += left[u.segment] == 0
        billed += sum(out.charged or [len(t) for t in texts])
        last_progress = time.monotonic()
        await progress(done, billed)

    todo = iter(calls)

    async def worker() -> None:
        for call in todo:
            await run(call)

    try:
        async with asyncio.TaskGroup() as group:
            for _ in range(min(len(calls), _at_once(service))):
                group.create_task(worker())
    except* DragomanError as eg:
        raise eg.exceptions[0] from None

    def assemble() -> list[str]:
        translated = [s.text for s in segments]
        pieces: dict[int, list[str]] = {}
        for u in units:
            pieces.setdefault(u.segment, []).append(outs[id(u)])
        for i, parts in pieces.items():
            translated[i] = "".join(parts)
        return translated

    return await asyncio.to_thread(assemble), billed


def _at_once(service: TranslationService) -> int:
    """Calls of one job in flight at once: as many as the server admits (each holds up to
    --max-items places); more would only be refused and asked again. No bound: all of them."""
    limit = service.admission.limit
    return max(1, limit // service.settings.max_items) if limit else 1 << 30
