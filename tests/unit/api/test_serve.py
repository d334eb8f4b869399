"""`run`: the server's exit. A dead engine stops it with an error (the CLI exits 1, so a
supervisor restarts it); SIGTERM's drain is tested on real processes in tests/router."""

from __future__ import annotations

import gc
import threading
from pathlib import Path

import pytest

from dragoman.api.serve import freeze_heap, run
from dragoman.cli import main
from dragoman.errors import EngineDead
from dragoman.metrics import Metrics
from dragoman.settings import ServeSettings
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
    raised: list[BaseException] = []

    def serve() -> None:  # uvicorn installs no signal handlers off the main thread
        try:
            run(settings, factory_for(fake))
        except BaseException as exc:
            raised.append(exc)

    thread = threading.Thread(target=serve)
    thread.start()
    callbacks = len(gc.callbacks)
    thread.join(timeout=30)
    assert not thread.is_alive()
    assert len(raised) == 1 and isinstance(raised[0], EngineDead)
    assert raised[0].message == "the engine has stopped"
    assert len(gc.callbacks) <= callbacks  # the server's GC timing left with it


def test_collections_are_timed_by_generation() -> None:
    metrics = Metrics()
    with metrics.watch_gc():
        gc.collect()
    full = metrics.registry.get_sample_value("dragoman_gc_pause_seconds_count", {"generation": "2"})
    took = metrics.registry.get_sample_value("dragoman_gc_pause_seconds_sum", {"generation": "2"})
    assert full is not None and full >= 1 and took is not None and took > 0


def test_freeze_heap_puts_the_live_objects_out_of_the_collectors_sight() -> None:
    assert gc.get_freeze_count() == 0
    try:
        freeze_heap()
        frozen = gc.get_freeze_count()
        assert frozen > 10_000  # the modules this process imported, at least
        assert len(gc.get_objects()) < frozen  # what is left to scan is what came after
    finally:
        gc.unfreeze()


def test_serve_with_a_language_it_cannot_serve_exits_2_before_listening(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """--languages is a flag like any other: wrong input exits 2, as the README says."""
    argv = ["serve", "--architecture", "echo", "--languages", "en,xx", "--port", "0"]
    assert main(argv) == 2
    assert capsys.readouterr().err == (
        "dragoman: error: --languages: xx not served by qwen2.5-coder-0.5b-instruct\n"
    )
