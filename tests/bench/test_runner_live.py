"""`dragoman bench --url` against a real echo server on 127.0.0.1 (no model; its translation
cache on, as a server under test has it)."""

from __future__ import annotations

import asyncio
import io
import json
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from dragoman.bench.runner import Bench
from dragoman.bench.servers import Launched, launch_echo
from dragoman.bench.settings import BenchSettings
from dragoman.cli import main
from tests.bench._signals import default_signals

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
    ("url", "message", "status"),
    [  # a server down is the work failing (1); a malformed URL is wrong input (2)
        ("http://127.0.0.1:1", "dragoman: error: cannot reach http://127.0.0.1:1: ", 1),
        ("127.0.0.1:1", "dragoman: invalid settings: url: '127.0.0.1:1' must start with http", 2),
    ],
)
def test_a_url_that_is_not_a_server_fails_up_front(
    url: str, message: str, status: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    code = main(["bench", "--url", url, "--no-offline", "--out", str(out)])
    err = capsys.readouterr().err
    assert code == status
    assert err.startswith(message) and err.count("\n") == 1
    assert not out.exists()  # nothing run, nothing written


@pytest.mark.parametrize(("flag", "ceiling"), [((), False), (("--offline",), True)])
def test_a_url_is_sent_load_only_unless_the_ceiling_is_asked_for(
    echo: Launched,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    flag: tuple[str, ...],
    ceiling: bool,
) -> None:
    # The ceiling loads the model on this machine: unasked, a bench of another machine's
    # server loaded gigabytes here first.
    from dragoman.bench import offline

    asked: list[int] = []

    def offline_ceiling(
        s: BenchSettings, items: list[object], log_dir: Path, cancel: object
    ) -> dict[str, float]:
        asked.append(len(items))
        return {"requests": len(items), "rps": 1.0, "output_tokens_per_s": 1.0, "seconds": 1.0}

    monkeypatch.setattr(offline, "offline_ceiling", offline_ceiling)
    args = ["--url", echo.url, *flag, "--concurrency", "1", "--requests-per-level", "2"]
    s = BenchSettings(_cli_parse_args=[*args, "--out", str(tmp_path)])
    results = asyncio.run(Bench(s, Console(file=io.StringIO())).run())
    assert bool(asked) is ceiling
    assert ("offline" in results) is ceiling


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


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_ctrl_c_keeps_the_levels_that_finished(tmp_path: Path, sig: signal.Signals) -> None:
    # 0.05 s a text: the two levels at one client take at least 3.2 s each, so the Ctrl-C
    # sent once the first level is logged lands in a later one, whatever the host's pace.
    # SIGTERM (a supervisor's stop) is taken as Ctrl-C is.
    server = launch_echo(tmp_path, LANGUAGES, "--echo-delay", "0.05")
    out, err = tmp_path / "out", tmp_path / "stderr.txt"
    args = ["--url", server.url, "--no-offline", "--out", str(out)]
    args += ["--concurrency", "16,1,1", "--requests-per-level", "64"]
    try:
        with err.open("wb") as sink:
            proc = subprocess.Popen(
                [sys.executable, "-m", "dragoman", "bench", *args],
                stdout=subprocess.DEVNULL,
                stderr=sink,
                preexec_fn=default_signals,
            )
        try:
            deadline = time.monotonic() + 120
            while "server c=16:" not in err.read_text(errors="replace"):
                assert proc.poll() is None, err.read_text()
                assert time.monotonic() < deadline, "the first level did not finish"
                time.sleep(0.05)
            proc.send_signal(sig)
            assert proc.wait(timeout=120) == 130
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    finally:
        server.stop()
    results = json.loads((out / "results.json").read_text())
    assert 1 <= len(results["runs"]) < 3
    assert all(run["summary"]["requests"] == 64 for run in results["runs"])
    assert results["meta"]["interrupted"] is True
    done = len(results["runs"])
    levels = "level" if done == 1 else "levels"
    assert f"interrupted: wrote the {done} {levels} that finished to {out}" in err.read_text()
