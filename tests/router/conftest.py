"""Routing tests: the real `dragoman route` process over echo-architecture dragoman servers,
all real processes on 127.0.0.1 (the echo engine answers in a fixed time, no model)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from dragoman.bench.servers import Launched


@pytest.fixture
def stop_all() -> Iterator[list[Launched]]:
    launched: list[Launched] = []
    yield launched
    for server in launched:
        server.stop()


@pytest.fixture
def logs(tmp_path: Path) -> Path:
    return tmp_path
