"""What the whole suite shares: a test that starts a real engine, Ray or a browser never runs
beside another test (scripts/test runs the engine-free tiers on two workers, then the rest one
at a time), since the engine's speed on 2 cores is what such a test depends on."""

from __future__ import annotations

import os

import pytest

WHOLE_MACHINE = frozenset({"integration", "llamacpp", "ray", "browser", "model_large"})


def pytest_runtest_setup(item: pytest.Item) -> None:
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        return
    wants = sorted({m.name for m in item.iter_markers()} & WHOLE_MACHINE)
    if wants:
        pytest.fail(
            f"{item.nodeid} is marked {', '.join(wants)}: it needs the machine to itself and "
            "must not run on a pytest-xdist worker (scripts/test's second pass runs it)",
            pytrace=False,
        )
