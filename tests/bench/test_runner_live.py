"""`dragoman bench --url` against a real echo server on 127.0.0.1 (no model; its translation
cache on, as a server under test has it)."""

from __future__ import annotations

import asyncio
import io
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from dragoman.bench.runner import Bench
from dragoman.bench.servers import Launched, launch_echo
from dragoman.cli import main
from dragoman.settings import BenchSettings

LANGUAGES = "en,fr,de,es,zh,ko"  # the workloads' target mix


@pytest.fixture(scope="module")
def echo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Launched]:
    server = launch_echo(tmp_path_factory.mktemp("echo"), LANGUAGES, "--echo-delay", "0.01")
    yield server
    server.stop()


def bench(url: str, out: Path, **settings: Any) -> tuple[dict[str, Any], str]:
    s = BenchSettings(url=url, out=out, offline=False, **settings)
    console = Console(file=io.StringIO(), width=200)
    results = asyncio.run(Bench(s, console).run())
    return results, console.file.getvalue()  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("http://127.0.0.1:1", "dragoman: error: cannot reach http://127.0.0.1:1: "),
        ("127.0.0.1:1", "dragoman: invalid settings: --url: '127.0.0.1:1' must start with http"),
    ],
)
def test_a_url_that_is_not_a_server_fails_up_front(
    url: str, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    code = main(["bench", "--url", url, "--no-offline", "--out", str(out)])
    err = capsys.readouterr().err
    assert code in (1, 2)
    assert err.startswith(message) and err.count("\n") == 1
    assert not out.exists()  # nothing run, nothing written


def test_each_level_counts_its_own_requests(echo: Launched, tmp_path: Path) -> None:
    results, shown = bench(echo.url, tmp_path, concurrency=[2, 2, 2], requests_per_level=5)
    assert [r["summary"]["ok"] for r in results["runs"]] == [5, 5, 5]
    # The progress bar starts again at each level: 5/5 at the end, not 15/5.
    assert "server c=2" in shown and " 5/5 " in shown and "15/5" not in shown


def test_levels_send_texts_the_run_has_not_sent(echo: Launched, tmp_path: Path) -> None:
    # The server's cache is on: a text sent again would come back from it, no engine work.
    # A seed of its own: the other tests' runs sent their workloads to this server already.
    results, shown = bench(
        echo.url, tmp_path, concurrency=[1, 3, 2], requests_per_level=8, workload_size=40, seed=7
    )
    records = [r for run in results["runs"] for r in run["records"]]
    assert sorted(r["index"] for r in records) == list(range(24))
    assert all(r["success"] and r["input_tokens"] > 0 for r in records)
    assert "warning" not in shown


def test_a_run_longer_than_the_workload_is_warned_of(echo: Launched, tmp_path: Path) -> None:
    _, shown = bench(echo.url, tmp_path, concurrency=[1, 1], requests_per_level=3, workload_size=4)
    assert "warning: up to 6 requests, 4 distinct texts in the workload" in shown
