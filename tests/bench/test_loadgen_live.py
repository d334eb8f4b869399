"""The load generator against a real server on 127.0.0.1 (echo architecture: fixed, known
service time, no model), so counts, bounds and timings can be checked exactly."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from dragoman.bench.loadgen import closed_loop, open_loop
from dragoman.bench.servers import Launched, launch_echo
from dragoman.bench.stats import summarise
from dragoman.bench.targets import DragomanTarget
from dragoman.bench.workloads import Item


@pytest.fixture(scope="module")
def echo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Launched]:
    # The cache off: every request waits the echo delay, repeats included.
    server = launch_echo(
        tmp_path_factory.mktemp("echo"), "en,fr", "--echo-delay", "0.1", "--cache-mib", "0"
    )
    yield server
    server.stop()


ITEMS = [Item(f"sentence number {i}", "en", "fr", "ui") for i in range(7)]


async def test_closed_loop_is_bounded_by_count_and_keeps_concurrency(echo: Launched) -> None:
    records = await closed_loop(DragomanTarget(echo.url), ITEMS, 4, 20, 30)
    assert len(records) == 20
    assert all(r.success for r in records)
    s = summarise(records)
    # 20 requests, 4 at a time, 0.1 s each: about 0.5 s, so about 40 req/s.
    assert 0.45 <= s.duration_s < 1.5
    assert s.latency_p50_s >= 0.1
    assert s.inference_share is not None and s.inference_share > 0.5


async def test_closed_loop_is_bounded_by_time(echo: Launched) -> None:
    records = await closed_loop(DragomanTarget(echo.url), ITEMS, 2, 10_000, 0.5)
    assert 6 <= len(records) <= 14  # 2 clients x 0.5 s / 0.1 s, plus those in flight


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
