"""`run`: the server's exit. A dead engine stops it with an error (the CLI exits 1, so a
supervisor restarts it); SIGTERM's drain is tested on real processes in tests/router."""

from __future__ import annotations

import threading
from pathlib import Path

from dragoman.api.serve import run
from dragoman.errors import EngineDead
from dragoman.settings import ServeSettings
from tests.fakes import FakeTranslator, factory_for


def test_dead_engine_stops_the_server_with_an_error(tmp_path: Path) -> None:
    fake = FakeTranslator()
    fake.dead = True  # dies right after loading; nobody sends a request
    settings = ServeSettings(
        data_dir=tmp_path, port=0, engine_check_interval=0.05, log_level="warning"
    )
    raised: list[BaseException] = []

    def serve() -> None:  # uvicorn installs no signal handlers off the main thread
        try:
            run(settings, factory_for(fake))
        except BaseException as exc:
            raised.append(exc)

    thread = threading.Thread(target=serve)
    thread.start()
    thread.join(timeout=30)
    assert not thread.is_alive()
    assert len(raised) == 1 and isinstance(raised[0], EngineDead)
    assert raised[0].message == "the engine has stopped"
