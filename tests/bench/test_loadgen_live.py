"""The load generator against a real server on 127.0.0.1 (echo architecture: fixed, known
service time, no model), so counts, bounds and timings can be checked exactly."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from dragoman.bench.loadgen import Record, closed_loop, open_loop
from dragoman.bench.servers import Launched, launch_echo
from dragoman.bench.stats import summarise
from dragoman.bench.targets import DragomanTarget
from dragoman.eval.workloads import Item


@pytest.fixture(scope="module")
def echo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Launched]:
    # The cache off: every request waits the echo delay, repeats included.
    server = launch_echo(
        tmp_path_factory.mktemp("echo"), "en,fr", "--echo-delay", "0.1", "--cache-mib", "0"
    )
    yield server
    server.stop()


ITEMS = [Item(f"sentence number {i}", "en", "fr", "ui") for i in range(7)]


def most_in_flight(records: list[Record]) -> int:
    """The most requests in flight at once (one ending as another starts counts once)."""
    events = sorted([(r.start, 1) for r in records] + [(r.start + r.latency, -1) for r in records])
    running = most = 0
    for _, step in events:
        running += step
        most = max(most, running)
    return most


async def test_closed_loop_is_bounded_by_count_and_keeps_concurrency(echo: Launched) -> None:
    records = await closed_loop(DragomanTarget(echo.url), ITEMS, 4, 20, 30)
    assert len(records) == 20
    assert all(r.success for r in records)
    s = summarise(records)
    # 4 at a time, always (counted from the records, not timed: a stalled host must not fail
    # it); 20 requests of 0.1 s each, 4 at a time, cannot take under 0.5 s.
    assert most_in_flight(records) == 4
    assert s.duration_s >= 0.45
    assert s.latency_p50_s >= 0.1
    assert s.inference_share is not None and s.inference_share > 0.5


async def test_closed_loop_is_bounded_by_time(echo: Launched) -> None:
    records = await closed_loop(DragomanTarget(echo.url), ITEMS, 2, 10_000, 0.5)
    # None starts after the 0.5 s: at most 2 clients x 0.5 s / 0.1 s, plus those in flight.
    assert 2 <= len(records) <= 14
    assert all(r.start < 0.5 for r in records)


async def test_failures_are_records_and_never_stop_the_run(echo: Launched, tmp_path: Path) -> None:
    items = [*ITEMS[:2], Item("bad target", "en", "ko", "ui"), Item("", "en", "fr", "ui")]
    records = await closed_loop(DragomanTarget(echo.url), items, 2, 12, 30)
    assert len(records) == 12
    failed = [r for r in records if not r.success]
    assert len(failed) == 6
    assert {r.status for r in failed} == {400, 422}
    assert all(r.error for r in failed)
    dead = await closed_loop(DragomanTarget("http://127.0.0.1:1"), ITEMS, 2, 4, 10)
    assert [r.success for r in dead] == [False] * 4
    assert all(r.status is None and "ConnectError" in (r.error or "") for r in dead)


async def test_open_loop_poisson_rate(echo: Launched) -> None:
    records = await open_loop(DragomanTarget(echo.url), ITEMS, 40.0, 60, 30, seed=1)
    assert len(records) == 60
    starts = sorted(r.start for r in records)
    rate = (len(starts) - 1) / (starts[-1] - starts[0])
    assert 25 < rate < 60  # Poisson around 40/s
