"""`run`: the server's exit. A dead engine stops it with an error (the CLI exits 1, so a
supervisor restarts it); SIGTERM's drain is tested on real processes in tests/router."""

from __future__ import annotations

import gc
import threading
from pathlib import Path

import pytest

from dragoman.api.serve import run
from dragoman.cli import main
from dragoman.errors import EngineDead
from dragoman.heap import THRESHOLDS
from dragoman.metrics import Metrics
from dragoman.service.settings import ServeSettings
from tests.fakes import FakeTranslator, factory_for


def test_dead_engine_stops_the_server_with_an_error(tmp_path: Path) -> None:
    fake = FakeTranslator()
    fake.dead = True  # dies right after loading; nobody sends a request
    settings = ServeSettings(
        data_dir=tmp_path,
        port=0,
        engine_check_interval=0.05,
        log_level="warning",
        gc_freeze=False,  # not this test process's heap
    )
    callbacks = len(gc.callbacks)
    with pytest.raises(EngineDead) as raised:
        serve_in_a_thread(settings, fake)
    assert raised.value.message == "the engine has stopped"
    assert len(gc.callbacks) <= callbacks  # the server's GC timing left with it


def serve_in_a_thread(settings: ServeSettings, fake: FakeTranslator) -> None:
    """`run` in a thread (uvicorn installs no signal handlers off the main thread), waited
    for; what it raised, raised here."""
    raised: list[BaseException] = []

    def serve() -> None:
        try:
            run(settings, factory_for(fake))
        except BaseException as exc:
            raised.append(exc)

    thread = threading.Thread(target=serve)
    thread.start()
    thread.join(timeout=30)
    assert not thread.is_alive()
    if raised:
        raise raised[0]


def test_collections_are_timed_by_generation() -> None:
    metrics = Metrics()
    with metrics.watch_gc():
        gc.collect()
    full = metrics.registry.get_sample_value("dragoman_gc_pause_seconds_count", {"generation": "2"})
    took = metrics.registry.get_sample_value("dragoman_gc_pause_seconds_sum", {"generation": "2"})
    assert full is not None and full >= 1 and took is not None and took > 0


def test_run_settles_the_heap_once_the_engine_is_up(tmp_path: Path, restored_gc: None) -> None:
    """`dragoman serve` (--gc-freeze, the default) freezes what is alive once the engine is
    up and raises the collector's thresholds (dragoman/heap.py)."""
    fake = FakeTranslator()
    fake.dead = True  # loads (the heap is settled then), then dies: the server stops
    settings = ServeSettings(
        data_dir=tmp_path, port=0, engine_check_interval=0.05, log_level="warning"
    )
    with pytest.raises(EngineDead):
        serve_in_a_thread(settings, fake)
    assert gc.get_freeze_count() > 10_000
    assert gc.get_threshold() == THRESHOLDS


def test_serve_with_a_language_it_cannot_serve_exits_2_before_listening(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """--languages is a flag like any other: wrong input exits 2, as the README says."""
    argv = ["serve", "--architecture", "echo", "--languages", "en,xx", "--port", "0"]
    assert main(argv) == 2
    assert capsys.readouterr().err == (
        "dragoman: error: --languages: xx not served by qwen2.5-coder-0.5b-instruct\n"
    )
