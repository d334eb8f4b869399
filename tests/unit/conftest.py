"""Unit tests see settings' own defaults, not the DRAGOMAN_ variables of whoever runs them
(CI runs the suite once with the engine forced slow through those)."""

from __future__ import annotations

import os

import pytest


@pytest.fixture(autouse=True)
def _no_dragoman_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in [n for n in os.environ if n.startswith("DRAGOMAN_")]:
        monkeypatch.delenv(name)
    # The fake engines echo their input, which the reply check (service/validate.py) rightly
    # reads as the wrong language and asks again: tests of the check turn it back on.
    monkeypatch.setenv("DRAGOMAN_RETRY_INVALID", "0")
