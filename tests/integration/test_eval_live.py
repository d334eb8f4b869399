"""`dragoman eval` against the session's real server: a tiny set (2 pairs x 3 sentences),
scored, with the JSON and Markdown written."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from dragoman.bench.servers import Launched
from tests.integration.conftest import Pace

pytestmark = pytest.mark.integration


def test_eval_scores_a_live_server(live_server: Launched, pace: Pace, tmp_path: Path) -> None:
    out = tmp_path / "eval"
    args = ["--url", live_server.url, "--pairs", "en-fr,en-de", "--kinds", "sentence"]
    args += ["--per-pair", "3", "--concurrency", "6", "--out", str(out), "--label", "live test"]
    done = subprocess.run(
        [sys.executable, "-m", "dragoman", "eval", *args],
        capture_output=True,
        text=True,
        timeout=pace.deadline(6 * 80, floor=180),
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    results = json.loads((out / "eval.json").read_text())
    rows = {(r["pair"], r["kind"]): r for r in results["summary"]}
    assert set(rows) == {
        ("en-fr", "sentence"),
        ("en-fr", "all"),
        ("en-de", "sentence"),
        ("en-de", "all"),
    }
    for row in rows.values():
        assert (row["n"], row["errors"], row["over_3x"], row["preamble"]) == (3, 0, 0, 0), row
        assert 0 <= row["wrong_language"] <= row["language_checked"] <= 3
    # A real model translates: far above what echoing the English scores (~20-25 on fr).
    assert rows[("en-fr", "all")]["chrf"] > 35
    assert rows[("en-de", "all")]["chrf"] > 25
    assert len(results["items"]) == 6
    assert all(item["text"] and item["finish_reason"] for item in results["items"])
    meta = results["meta"]
    assert meta["model"] and meta["server"]["body"]["engines"]
    assert meta["host"]["isa"] == results["meta"]["server"]["body"]["host"]["isa"]
    md = (out / "eval.md").read_text()
    assert md.startswith("# dragoman eval: live test")
    assert "| en-fr | sentence | 3 |" in md
