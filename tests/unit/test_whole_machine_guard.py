"""tests/conftest.py: a test marked as needing the machine fails on a pytest-xdist worker."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from tests.conftest import pytest_runtest_setup


@dataclass
class Item:
    markers: list[str]
    nodeid: str = "tests/x.py::test_x"

    def iter_markers(self) -> list[pytest.Mark]:
        return [getattr(pytest.mark, name).mark for name in self.markers]


@pytest.mark.parametrize("marker", ["integration", "llamacpp", "ray", "browser"])
def test_a_whole_machine_test_fails_on_a_worker(
    monkeypatch: pytest.MonkeyPatch, marker: str
) -> None:
    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw1")
    with pytest.raises(pytest.fail.Exception, match=f"is marked {marker}"):
        pytest_runtest_setup(Item(["parametrize", marker]))  # type: ignore[arg-type]


def test_it_runs_alone_and_others_run_anywhere(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)
    pytest_runtest_setup(Item(["integration"]))  # type: ignore[arg-type]
    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw0")
    pytest_runtest_setup(Item(["parametrize", "asyncio"]))  # type: ignore[arg-type]
