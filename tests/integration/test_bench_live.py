"""One short real benchmark run against the live server (real engine, real workload)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from dragoman.bench.servers import Launched

pytestmark = pytest.mark.integration


def test_bench_against_a_running_server_writes_results(
    live_server: Launched, tmp_path: Path
) -> None:
    out = tmp_path / "results"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "dragoman",
            "bench",
            "--url",
            live_server.url,
            "--server-pid",
            str(live_server.pid),
            "--workload",
            "ui",
            "--concurrency",
            "1,4",
            "--requests-per-level",
            "6",
            "--no-offline",
            "--out",
            str(out),
        ],
        check=True,
        timeout=600,
        capture_output=True,
    )
    results = json.loads((out / "results.json").read_text())
    assert [r["load"] for r in results["runs"]] == ["c=1", "c=4"]
    for run in results["runs"]:
        assert run["summary"]["ok"] == 6
        assert run["summary"]["queue_share"] is not None
        assert len(run["records"]) == 6
    assert "| server | c=4 | 6/6 |" in (out / "results.md").read_text()
