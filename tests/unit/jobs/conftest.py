"""Document jobs over the fake engine: a translation service without an app, a folder store,
and a test format whose segments a test writes line by line (`plain: ...`, `xml: ...`,
`html: ...`), so grouping is tested whatever formats the registry holds."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from dragoman.errors import BadFile
from dragoman.files import registry
from dragoman.files.base import FileFormat, Limits, Segment
from dragoman.jobs.service import Jobs
from dragoman.jobs.store import DirStore
from dragoman.metrics import Metrics
from dragoman.service.admission import Admission
from dragoman.service.quota import KeyLimits
from dragoman.service.settings import ServeSettings
from dragoman.service.translation import TranslationService
from tests.fakes import FakeTranslator


@dataclass
class _Lines:
    segments: list[Segment]

    def render(self, translated: list[str]) -> bytes:
        return "\n".join(translated).encode()


def _read(data: bytes, limits: Limits) -> _Lines:
    segments = []
    for line in data.decode().splitlines():
        kind, sep, text = line.partition(": ")
        if not sep or kind not in ("plain", "xml", "html"):
            raise BadFile(f"not a segments file: {line!r}")
        segments.append(Segment(text, None if kind == "plain" else kind))  # type: ignore[arg-type]
    return _Lines(segments)


SEGMENTS = FileFormat("seg", (".seg",), "text/x-segments", _read)


@pytest.fixture(autouse=True)
def segments_format(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(registry, "FORMATS", (*registry.FORMATS, SEGMENTS))


def make_service(fake: FakeTranslator, admitted: int = 0, **settings: object) -> TranslationService:
    base: dict[str, object] = {"cache_mib": 0, "max_items": 4, "max_text_chars": 200}
    return TranslationService(
        lambda: fake,
        ServeSettings(**{**base, **settings}),  # type: ignore[arg-type]
        Metrics(),
        Admission(admitted, 16),
        KeyLimits(0, 0),
    )


@pytest.fixture
def fake() -> FakeTranslator:
    return FakeTranslator()


@pytest.fixture
def store(tmp_path: Path) -> DirStore:
    return DirStore(tmp_path / "documents", max_jobs=100, max_bytes=2**30, ttl=3600)


@pytest.fixture
async def jobs(fake: FakeTranslator, store: DirStore) -> AsyncIterator[Jobs]:
    service = make_service(fake)
    async with Jobs(service, lambda: fake, store) as j:
        yield j


async def until(condition: Callable[[], bool], within: float = 5.0) -> None:
    """Poll `condition` until true; fail at the deadline (no fixed sleeps)."""
    loop = asyncio.get_running_loop()
    end = loop.time() + within
    while not condition():
        assert loop.time() < end, "condition not met in time"
        await asyncio.sleep(0.005)
