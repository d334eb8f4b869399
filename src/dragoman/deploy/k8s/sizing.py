"""A model pod's size from measured figures: CPUs, memory and load time.

From the committed `dragoman bench` results of the nodes' host class: the CPUs its engine ran
on (meta.host.usable_cpus), the longest load time of its server (start to /ready,
`server_start_s`), and the peak memory of the server and its engine processes sampled during
the run (footprint.json beside results.json, `python -m dragoman.plan.footprint`).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from dragoman.errors import ConfigError

MEMORY_MARGIN = 1.25  # the peak was one run's; allocator arenas and longer texts vary it
MEMORY_STEP_MIB = 256


@dataclass(frozen=True)
class PodSize:
    cpu: float
    memory_mib: int
    start_seconds: float
    source: str
    """Where the figures came from (a results folder, or "set explicitly")."""


def round_memory(peak_mib: float) -> int:
    return math.ceil(peak_mib * MEMORY_MARGIN / MEMORY_STEP_MIB) * MEMORY_STEP_MIB


def _run_time(folder: Path, results: dict[str, Any]) -> float:
    """When the run was made: the time it recorded (meta.started), else its file's mtime."""
    try:
        return datetime.fromisoformat(results["meta"]["started"]).timestamp()
    except (KeyError, TypeError, ValueError):
        return (folder / "results.json").stat().st_mtime


def _footprints(root: Path, host_class: str) -> list[tuple[float, Path]]:
    """(run time, folder) of every run of host_class under root with a footprint.json."""
    from dragoman.plan.figures import host_class_of, load_results

    found = []
    for fp in root.glob("*/footprint.json"):
        results = fp.parent / "results.json"
        if not results.is_file():
            continue
        try:
            data = load_results(results)
            if host_class_of(data) != host_class:
                continue
        except (ValueError, KeyError, ConfigError):
            continue
        found.append((_run_time(fp.parent, data), fp.parent))
    return sorted(found)


def peak_mib(footprint: Path) -> float:
    """The measured peak RSS of a footprint.json; ConfigError when it is not one."""
    try:
        peak = json.loads(footprint.read_text())["peak_rss_mib"]
    except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError) as exc:
        raise ConfigError(f"{footprint}: not a footprint ({exc!r}); give --memory-mib") from None
    if not isinstance(peak, int | float) or isinstance(peak, bool) or not 0 < peak < math.inf:
        raise ConfigError(f"{footprint}: peak_rss_mib is {peak!r}, not a size; give --memory-mib")
    return float(peak)


def measured_size(
    root: Path,
    host_class: str,
    cpu: float | None = None,
    memory_mib: int | None = None,
    start_seconds: float | None = None,
) -> PodSize:
    """Explicit values win; the rest from the newest run of host_class under root (by the
    time the run recorded, not its folder's name)."""
    if cpu is not None and memory_mib is not None and start_seconds is not None:
        return PodSize(cpu, memory_mib, start_seconds, "set explicitly")
    from dragoman.plan.figures import figures_from

    footprints = _footprints(root, host_class)
    if not footprints:
        raise ConfigError(
            f"no measured footprint for host class {host_class!r} under {root}: run the bench "
            "with `python -m dragoman.plan.footprint` beside it (README: Scaling out), or give "
            "--cpu, --memory-mib and --start-seconds"
        )
    _, folder = footprints[-1]
    try:
        fig = figures_from(folder)
    except (ValueError, KeyError, TypeError) as exc:
        raise ConfigError(f"{folder}: cannot read bench figures from it ({exc})") from None
    start = start_seconds if start_seconds is not None else fig.start_seconds
    if start is None:
        raise ConfigError(f"{folder}: no server start time recorded; give --start-seconds")
    return PodSize(
        cpu=cpu if cpu is not None else float(fig.cores),
        memory_mib=memory_mib
        if memory_mib is not None
        else round_memory(peak_mib(folder / "footprint.json")),
        start_seconds=start,
        source=str(folder),
    )
