"""What a replica of one host class does, read from committed `dragoman bench` results.

A bench results.json holds, per architecture and closed-loop level, one record per request
(latency, output tokens, target language, approximate input tokens) and the host it ran on
(`meta.host.cpu_class`, cores). From the `continuous` runs (dragoman with the host defaults)
this module fits, per level of concurrency c, a request's latency as

    latency = alpha(c) + beta(c) * output_tokens + residual

(alpha: prefill, HTTP and our own code; beta: the time between tokens with c sequences in the
batch), keeps the residuals, and fits how many output tokens a text of n input tokens gets in
each target language. Nothing else about the run is used: the planner predicts from these.
"""

from __future__ import annotations

import json
import math
import statistics
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dragoman.errors import ConfigError

# Runs that are dragoman as deployed: the bench's own `continuous`, or a server run with --url.
DEPLOYED = ("continuous", "server")


@dataclass(frozen=True)
class LevelFit:
    concurrency: int
    alpha: float
    beta: float
    residuals: tuple[float, ...]
    rps: float
    p99: float
    requests: int
    mean_out: float
    """Mean output tokens of the level's texts: alpha + beta * mean_out is its mean latency."""
    min_out: float = 0.0
    max_out: float = math.inf
    """The output tokens the level measured: the line is known between them only."""
    min_latency: float = 0.0
    """The level's fastest measured request: no text is predicted faster."""

    def covers(self, output_tokens: float) -> bool:
        return self.min_out <= output_tokens <= self.max_out

    def latency(self, output_tokens: float) -> float:
        # Outside the measured outputs the line is held at its nearest end, not extended: a
        # line through 6-40 s requests gave 3-word texts 0.1 s, and 1-word texts less than 0.
        out = min(max(output_tokens, self.min_out), self.max_out)
        return max(self.min_latency, self.alpha + self.beta * out)


@dataclass
class HostFigures:
    host_class: str
    cores: int
    label: str
    max_num_seqs: int
    levels: list[LevelFit]
    out_per_in: dict[str, float]
    """Output tokens per approximate input token, by target language ("*": all)."""
    start_seconds: float | None = None
    sources: list[str] = field(default_factory=list)

    def out_tokens(self, in_tokens: float, target: str) -> float:
        return self.out_per_in.get(target, self.out_per_in["*"]) * in_tokens


def fit_line(xs: list[float], ys: list[float]) -> tuple[float, float]:
    """Least squares y = a + b x; a flat line through the mean when x does not vary."""
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    if sxx == 0:
        return my, 0.0
    b = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sxx
    return my - b * mx, b


def _number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def checked_records(records: object, where: str) -> list[dict[str, Any]]:
    """A level's records, each an object; a successful one with a latency in seconds (finite,
    above 0: a zero or NaN one made a division by zero or an empty table, not an error)."""
    if not isinstance(records, list) or not all(isinstance(r, dict) for r in records):
        raise ValueError(f"{where}: records are not a list of objects")
    for r in records:
        if r.get("success") and not (_number(r.get("latency")) and r["latency"] > 0):
            raise ValueError(f"{where}: a successful request's latency is {r.get('latency')!r}")
    return records


def fit_level(concurrency: int, records: list[dict[str, Any]], summary: dict[str, Any]) -> LevelFit:
    where = f"level c={concurrency}"
    ok = [r for r in checked_records(records, where) if r.get("success") and r.get("output_tokens")]
    if len(ok) < 3:
        raise ValueError(f"{where}: {len(ok)} successful records, need 3")
    xs = [float(r["output_tokens"]) for r in ok]
    ys = [float(r["latency"]) for r in ok]
    alpha, beta = fit_line(xs, ys)
    return LevelFit(
        concurrency=concurrency,
        alpha=alpha,
        beta=beta,
        residuals=tuple(y - (alpha + beta * x) for x, y in zip(xs, ys, strict=True)),
        rps=float(summary["rps"]),
        p99=float(summary["latency_p99_s"]),
        requests=len(ok),
        mean_out=statistics.fmean(xs),
        min_out=min(xs),
        max_out=max(xs),
        min_latency=min(ys),
    )


def fit_out_per_in(records: list[dict[str, Any]]) -> dict[str, float]:
    """Output tokens per input token (the bench's approximate count), per target language."""
    sums: dict[str, list[float]] = {}
    for r in records:
        if not r.get("success") or not r.get("output_tokens") or not r.get("approx_tokens"):
            continue
        for key in (r.get("target_lang") or "*", "*"):
            s = sums.setdefault(key, [0.0, 0.0])
            s[0] += r["output_tokens"]
            s[1] += r["approx_tokens"]
    if "*" not in sums:
        raise ValueError("no successful records with token counts")
    return {k: out / inp for k, (out, inp) in sums.items()}


def load_results(path: Path) -> dict[str, Any]:
    """A `dragoman bench` results.json (or the folder holding one); ConfigError for anything
    else."""
    file = path / "results.json" if path.is_dir() else path
    try:
        data = json.loads(file.read_text())
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise ConfigError(f"{file}: not a dragoman bench results file ({exc})") from None
    if (
        not isinstance(data, dict)
        or not isinstance(data.get("meta"), dict)
        or not isinstance(data.get("runs"), list)
    ):
        raise ConfigError(f"{file}: not a dragoman bench results file (no meta and runs)")
    return data


def host_class_of(results: dict[str, Any]) -> str | None:
    host = results.get("meta", {}).get("host")
    if not isinstance(host, dict):
        return None
    cls = host.get("cpu_class")
    if not isinstance(cls, str):
        return None
    # A host imitating a slower one (oneDNN's ISA cap) is not a measurement of the real thing.
    return f"{cls}-emulated" if cls and host.get("isa_cap") else cls


def figures_from(path: Path) -> HostFigures:
    """The deployed architecture's fits from one results.json (closed-loop levels up to and
    past max_num_seqs; levels past it carry the queue in alpha)."""
    results = load_results(path)
    meta = results["meta"]
    host_class = host_class_of(results)
    if host_class is None:
        raise ValueError(f"{path}: no host recorded (run before host detection)")
    runs = [r for r in results["runs"] if r["architecture"] in DEPLOYED and r["mode"] == "closed"]
    if not runs:
        raise ValueError(f"{path}: no closed-loop run of {' or '.join(DEPLOYED)}")
    levels = sorted(
        (fit_level(int(r["concurrency"]), r["records"], r["summary"]) for r in runs),
        key=lambda f: f.concurrency,
    )
    records = [rec for r in runs for rec in r["records"]]
    starts = [r["server_start_s"] for r in runs if r.get("server_start_s")]
    host = meta["host"]
    return HostFigures(
        host_class=host_class,
        cores=len(host.get("usable_cpus") or []) or int(host.get("logical_cores", 1)),
        label=str(meta.get("label") or meta.get("machine", "")),
        max_num_seqs=int(meta.get("settings", {}).get("max_num_seqs", 16)),
        levels=levels,
        out_per_in=fit_out_per_in(records),
        start_seconds=max(starts) if starts else None,
        sources=[str(path)],
    )


def discover(root: Path, max_num_seqs: int | None = None) -> dict[str, HostFigures]:
    """Every usable results.json under root, one (the one with most levels) per host class."""
    found: dict[str, HostFigures] = {}
    for file in sorted(root.glob("*/results.json")):
        try:
            fig = figures_from(file)
        except (ValueError, KeyError, ConfigError):
            continue
        if max_num_seqs is not None and fig.max_num_seqs != max_num_seqs:
            continue
        best = found.get(fig.host_class)
        if best is None or len(fig.levels) > len(best.levels):
            found[fig.host_class] = fig
    return found
