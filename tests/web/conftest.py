"""Web page tests: real `dragoman serve` processes on the echo architecture (no model) on
127.0.0.1, and a real headless chromium."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from dragoman.bench.servers import Launched, launch_echo
from tests.web._browser import browser, page  # noqa: F401 (fixtures)

LANGUAGES = "en,fr,de"
CHAR_LIMIT = 100


@pytest.fixture(scope="module")
def echo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Launched]:
    """An echo server answering after 20 ms, with a small character limit."""
    server = launch_echo(
        tmp_path_factory.mktemp("echo"),
        LANGUAGES,
        "--echo-delay",
        "0.02",
        "--max-text-chars",
        str(CHAR_LIMIT),
    )
    yield server
    server.stop()


@pytest.fixture
def logs(tmp_path: Path) -> Path:
    return tmp_path
