"""The planner against a measured run: the fresh run's texts (their lengths and languages,
nothing it measured) are the mix; the planner predicts one replica's req/s at the p99 target
from other, committed figures; the run's own levels give the measured req/s at the same
target, by the same interpolation."""

from __future__ import annotations

import math
import statistics
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from dragoman.plan.figures import (
    DEPLOYED,
    HostFigures,
    checked_records,
    host_class_of,
    load_results,
)
from dragoman.plan.model import WORDS_TO_TOKENS, Capacity, Mix, capacity_at, predict
from dragoman.stats import percentile


@dataclass(frozen=True)
class MeasuredLevel:
    concurrency: int
    requests: int
    rps_steady: float
    """c / mean latency: the closed loop's steady state (Little's law), as predicted."""
    rps_bench: float
    """What the bench reported: drained levels count their tail."""
    p99: float


@dataclass(frozen=True)
class Check:
    host_class: str
    mix: Mix
    predicted: Capacity
    measured: Capacity
    levels: list[MeasuredLevel]

    @property
    def error(self) -> float:
        """(predicted - measured) / measured; infinite when the run never met the target."""
        if self.measured.rps <= 0:
            return math.inf
        return (self.predicted.rps - self.measured.rps) / self.measured.rps


def measured_run(path: Path) -> tuple[str, Mix, list[MeasuredLevel]]:
    results = load_results(path)
    host_class = host_class_of(results) or "unknown"
    runs = [r for r in results["runs"] if r["architecture"] in DEPLOYED and r["mode"] == "closed"]
    words: Counter[float] = Counter()
    pairs: Counter[str] = Counter()
    levels = []
    for run in runs:
        c = int(run["concurrency"])
        records = checked_records(run["records"], f"{path}: level c={c}")
        for r in records:
            tokens, target = r.get("approx_tokens"), r.get("target_lang")
            if not isinstance(tokens, int | float) or not tokens > 0 or not isinstance(target, str):
                raise ValueError(
                    f"{path}: a record without its text's approx_tokens and target_lang"
                )
            words[round(tokens / WORDS_TO_TOKENS, 1)] += 1
            pairs[f"en-{target}"] += 1
        lat = [r["latency"] for r in records if r.get("success")]
        # A level where every request failed met no target: no throughput, no finite p99.
        steady, p99 = (c / statistics.fmean(lat), percentile(lat, 99)) if lat else (0.0, math.inf)
        levels.append(MeasuredLevel(c, len(lat), steady, float(run["summary"]["rps"]), p99))
    if not any(m.requests for m in levels):
        raise ValueError(f"{path}: no successful request in a closed-loop run to check against")
    mix = Mix(tuple(words.items()), tuple(pairs.items()))
    return host_class, mix, levels


def _folder(path: Path) -> Path:
    """A run's folder, given it or its results.json."""
    path = path.resolve()
    return path if path.is_dir() else path.parent


def check(fig: HostFigures, measured: Path, p99_target: float) -> Check:
    host_class, mix, levels = measured_run(measured)
    if host_class != fig.host_class:
        raise ValueError(f"{measured} ran on {host_class}, the figures are {fig.host_class}")
    # Whole path parts: runs/exact1 is not inside runs/exact.
    if any(_folder(Path(src)).is_relative_to(_folder(measured)) for src in fig.sources):
        raise ValueError("the figures must not come from the run they are checked against")
    predicted = capacity_at([(p.concurrency, p.p99, p.rps) for p in predict(fig, mix)], p99_target)
    got = capacity_at([(m.concurrency, m.p99, m.rps_steady) for m in levels], p99_target)
    return Check(host_class, mix, predicted, got, levels)
