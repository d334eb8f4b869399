"""Unit tests see settings' own defaults, not the DRAGOMAN_ variables of whoever runs them
(CI runs the suite once with the engine forced slow through those)."""

from __future__ import annotations

import gc
import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def _no_dragoman_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in [n for n in os.environ if n.startswith("DRAGOMAN_")]:
        monkeypatch.delenv(name)
    # The fake engines echo their input, which the reply check (service/validate.py) rightly
    # reads as the wrong language and asks again: tests of the check turn it back on.
    monkeypatch.setenv("DRAGOMAN_RETRY_INVALID", "0")


@pytest.fixture
def restored_gc() -> Iterator[None]:
    """This test process's garbage collector as it was after the test: unfrozen, its
    thresholds back (a test that settles the heap as a server process does)."""
    assert gc.get_freeze_count() == 0
    thresholds = gc.get_threshold()
    try:
        yield
    finally:
        gc.unfreeze()
        gc.set_threshold(*thresholds)


@pytest.fixture
def fake_llamacpp_build() -> Callable[..., Path]:
    """Empty files where scripts/build-llama-cpp puts its binaries under a data directory,
    with the flags stamp of this version's build (`stamped`) or without (an earlier one's)."""
    from dragoman.engine import llamacpp_build as b
    from dragoman.settings import LLAMA_CPP_PYTHON_VERSION as version

    def make(data_dir: Path, stamped: bool = True) -> Path:
        for target in b.TARGETS:
            path = b.binary(data_dir, version, target)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("")
        if stamped:
            b.stamp(data_dir, version).write_text(b.STAMPED)
        else:
            b.stamp(data_dir, version).unlink(missing_ok=True)
        return b.binary(data_dir, version, "llama-server")

    return make
