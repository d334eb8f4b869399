"""Memory footprint of a server under load, for the resource requests of a deployment.

`python -m dragoman.plan.footprint --parent PID --out FILE` samples every process below PID
(a `dragoman bench` run: its servers, their vLLM EngineCore processes) until PID exits, and
writes the peak of their summed RSS and PSS. PSS shares pages between processes fairly, so it
does not count the libraries both processes map twice; RSS is the safe upper bound.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import psutil
from pydantic import Field

from dragoman.settings import _Base


class FootprintSettings(_Base):
    parent: int
    """PID whose descendants are sampled (a `dragoman bench` run)."""

    out: Path
    """JSON file to write."""

    interval: float = Field(default=0.5, gt=0)
    """Seconds between samples."""


def tree_memory(root: psutil.Process, include_root: bool = False) -> tuple[float, float, int]:
    """(RSS MiB, PSS MiB, processes) summed over root's descendants (and root if asked)."""
    try:
        procs = [*([root] if include_root else []), *root.children(recursive=True)]
    except psutil.Error:
        return 0.0, 0.0, 0
    rss = pss = 0.0
    for p in procs:
        try:
            info = p.memory_full_info()
        except psutil.Error:
            continue
        rss += info.rss
        pss += getattr(info, "pss", info.rss)
    return rss / 2**20, pss / 2**20, len(procs)


def _tree_cpu_seconds(root: psutil.Process) -> float:
    total = 0.0
    try:
        procs = [root, *root.children(recursive=True)]
    except psutil.Error:
        return 0.0
    for p in procs:
        try:
            t = p.cpu_times()
        except psutil.Error:
            continue
        # children_*: descendants already reaped, counted once in their live parent.
        total += t.user + t.system + t.children_user + t.children_system
    return total


def sample(parent: int, interval: float) -> dict[str, Any]:
    """Peak memory of the tree, and the CPU that processes outside it took meanwhile (other
    work on a shared machine makes a benchmark read slow)."""
    root = psutil.Process(parent)
    peak_rss = peak_pss = 0.0
    peak_procs = 0
    samples = 0
    started = time.monotonic()
    busy0 = sum(psutil.cpu_times()[:3])  # user, nice, system of the whole machine
    tree0 = _tree_cpu_seconds(root)
    tree_last = tree0
    while root.is_running() and root.status() != psutil.STATUS_ZOMBIE:
        tree_last = max(tree_last, _tree_cpu_seconds(root))
        rss, pss, n = tree_memory(root)
        if rss > peak_rss:
            peak_rss, peak_procs = rss, n
        peak_pss = max(peak_pss, pss)
        samples += 1
        time.sleep(interval)  # a sampling period, not a wait for a condition
    elapsed = time.monotonic() - started
    busy = sum(psutil.cpu_times()[:3]) - busy0
    cpus = psutil.cpu_count() or 1
    other = max(0.0, busy - (tree_last - tree0))
    return {
        "other_cpu_percent": round(100 * other / (elapsed * cpus), 1) if elapsed else 0.0,
        "peak_rss_mib": round(peak_rss, 1),
        "peak_pss_mib": round(peak_pss, 1),
        "processes_at_peak": peak_procs,
        "samples": samples,
        "interval_s": interval,
        "seconds": round(elapsed, 1),
    }


def main(argv: list[str] | None = None) -> int:
    import sys

    from dragoman.argv import parse

    args = sys.argv[1:] if argv is None else argv
    s = parse(FootprintSettings, args, "python -m dragoman.plan.footprint")
    result = sample(s.parent, s.interval)
    s.out.parent.mkdir(parents=True, exist_ok=True)
    s.out.write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
