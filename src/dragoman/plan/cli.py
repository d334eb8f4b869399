"""`dragoman plan`: the assumptions, the replicas each host class needs, and optionally a
simulated day or a check against a measured run, as rich tables."""

from __future__ import annotations

import math
from pathlib import Path

from rich.console import Console
from rich.table import Table

from dragoman.errors import ConfigError
from dragoman.plan.check import check
from dragoman.plan.figures import HostFigures, discover, figures_from
from dragoman.plan.model import (
    WORDS_TO_TOKENS,
    Mix,
    SizePlan,
    mix_from_specs,
    outside_measured,
    plan_size,
    predict,
)
from dragoman.plan.settings import PlanSettings
from dragoman.plan.simulate import Day, DayResult, simulate_day


def _figures(path: Path) -> HostFigures:
    try:
        return figures_from(path)
    except (ValueError, KeyError, TypeError) as exc:  # a results file of another shape
        raise ConfigError(f"{path}: cannot read bench figures from it ({exc!r})") from None


def load_figures(s: PlanSettings) -> dict[str, HostFigures]:
    if s.results:
        figs = [_figures(p) for p in s.results]
        found = {f.host_class: f for f in figs if f.max_num_seqs == s.max_num_seqs}
    else:
        found = discover(s.bench_results, s.max_num_seqs)
    if s.host_classes:
        found = {k: v for k, v in found.items() if k in s.host_classes}
    if not found:
        where = ", ".join(map(str, s.results)) if s.results else f"under {s.bench_results}"
        only = f" for {', '.join(s.host_classes)}" if s.host_classes else ""
        raise ConfigError(f"no bench figures with max_num_seqs {s.max_num_seqs} {where}{only}")
    return found


def _fmt(x: float, digits: int = 2) -> str:
    return "-" if x is None or math.isnan(x) else f"{x:.{digits}f}"


def assumptions(s: PlanSettings, mix: Mix, figs: dict[str, HostFigures]) -> Table:
    t = Table(title="Assumptions", show_header=False)
    t.add_column("what")
    t.add_column("value")
    words = ", ".join(f"{w:g} words x{p:g}" for w, p in mix.words)
    t.add_row("target load", f"{s.rps:g} req/s at the peak, one text a request")
    t.add_row("p99 target", f"{s.p99:g} s")
    t.add_row("text lengths", f"{words} (1 word = {WORDS_TO_TOKENS} tokens, as the bench counts)")
    t.add_row("pairs", ", ".join(f"{p} x{w:g}" for p, w in mix.pairs))
    for fig in figs.values():
        ratios = ", ".join(f"{k} {v:.2f}" for k, v in sorted(fig.out_per_in.items()))
        levels = ", ".join(str(f.concurrency) for f in fig.levels)
        t.add_row(
            f"figures {fig.host_class}",
            f"{', '.join(fig.sources)}: {fig.label}; {fig.cores} CPUs, max_num_seqs "
            f"{fig.max_num_seqs}, closed-loop levels {levels}; output tokens per input token: "
            f"{ratios}",
        )
    t.add_row(
        "latency model",
        "per level c: latency = alpha(c) + beta(c) x output tokens + the level's residuals; "
        "req/s = c / mean latency (Little's law); the source language does not change the cost",
    )
    t.add_row(
        "replicas",
        f"ceil(peak / ({s.headroom:g} x capacity at the p99 target)); capacity interpolated "
        "between measured levels, never extrapolated past the highest; a text's latency is "
        "held at the nearest measured one outside the output tokens a level measured",
    )
    return t


def levels_table(fig: HostFigures, mix: Mix) -> Table:
    t = Table(title=f"One {fig.host_class} replica on this mix, per measured level")
    for col in ("clients", "alpha s", "beta s/token", "mean latency s", "req/s", "p99 s"):
        t.add_column(col, justify="right")
    for level, p in zip(fig.levels, predict(fig, mix), strict=True):
        t.add_row(
            str(level.concurrency),
            _fmt(level.alpha),
            _fmt(level.beta, 4),
            _fmt(p.mean_latency),
            _fmt(p.rps),
            _fmt(p.p99),
        )
    return t


def _warn_outside(console: Console, fig: HostFigures, mix: Mix) -> None:
    warning = outside_measured(fig, mix)
    if warning:
        console.print(f"[yellow]outside the measured range[/]: {warning}")


def plans_table(plans: list[SizePlan], s: PlanSettings) -> Table:
    t = Table(title=f"Replicas for {s.rps:g} req/s with p99 <= {s.p99:g} s")
    for col in ("host class", "CPUs", "capacity req/s", "at clients", "replicas", "CPUs in all"):
        t.add_column(col, justify="right")
    for p in plans:
        cap = p.capacity
        t.add_row(
            p.fig.host_class,
            str(p.fig.cores),
            ("≥" if cap.capped else "") + _fmt(cap.rps),
            _fmt(cap.concurrency, 1),
            str(p.replicas) if p.replicas else "p99 target not met",
            str(p.replicas * p.fig.cores) if p.replicas else "-",
        )
    return t


def day_table(r: DayResult, replicas: int, fig: HostFigures) -> Table:
    t = Table(title=f"A simulated day: {replicas} {fig.host_class} replicas")
    for col in ("hour", "requests", "rejected", "p50 s", "p99 s"):
        t.add_column(col, justify="right")
    for h in r.hours:
        t.add_row(
            f"{h.hour:02d}",
            str(h.arrivals),
            f"{100 * h.rejected_share:.2f}%",
            _fmt(h.p50),
            _fmt(h.p99),
        )
    t.add_row("day", str(r.arrivals), f"{100 * r.rejected_share:.2f}%", "", _fmt(r.p99))
    return t


def run_plan(s: PlanSettings) -> None:
    console = Console()
    figs = load_figures(s)
    if s.check is not None:
        run_check(s, figs, s.check, console)
        return
    try:
        mix = mix_from_specs(s.words, s.pairs)
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
    console.print(assumptions(s, mix, figs))
    plans = sorted(
        (plan_size(f, mix, s.rps, s.p99, s.headroom) for f in figs.values()),
        key=lambda p: (p.replicas == 0, p.replicas * p.fig.cores),
    )
    for fig in figs.values():
        console.print(levels_table(fig, mix))
        _warn_outside(console, fig, mix)
    console.print(plans_table(plans, s))
    if not s.simulate:
        return
    first = plans[0]
    replicas = s.replicas or first.replicas or 1
    day = Day(s.rps, s.trough, s.peak_hour, s.bursts, s.burst_factor, s.burst_seconds, s.hours)
    limit = s.max_admitted or 4 * s.max_num_seqs
    with console.status("simulating the day"):
        result = simulate_day(first.fig, mix, day, replicas, limit, s.seed)
    console.print(day_table(result, replicas, first.fig))
    console.print(
        f"diurnal: {s.trough:g} x peak at night, peak at {s.peak_hour:g}h; {len(result.bursts)} "
        f"bursts of {s.burst_seconds:g} s at {s.burst_factor:g}x; admission bound {limit} texts "
        f"a replica (429 past it); seed {s.seed}"
    )


def run_check(
    s: PlanSettings, figs: dict[str, HostFigures], measured: Path, console: Console
) -> None:
    from dragoman.plan.check import measured_run

    try:
        host_class, _, _ = measured_run(measured)
        if host_class not in figs:
            raise ConfigError(f"no committed figures for {host_class} to check {measured} against")
        c = check(figs[host_class], measured, s.p99)
    except (ValueError, KeyError, TypeError) as exc:  # a results file of another shape
        detail = f"no {exc} in it" if isinstance(exc, KeyError) else str(exc)
        raise ConfigError(f"--check {measured}: {detail}") from None
    console.print(assumptions(s, c.mix, {host_class: figs[host_class]}))
    console.print(levels_table(figs[host_class], c.mix))
    _warn_outside(console, figs[host_class], c.mix)
    t = Table(title=f"Measured: {measured}")
    for col in ("clients", "requests", "req/s (c / mean latency)", "req/s (bench)", "p99 s"):
        t.add_column(col, justify="right")
    for m in c.levels:
        t.add_row(
            str(m.concurrency), str(m.requests), _fmt(m.rps_steady), _fmt(m.rps_bench), _fmt(m.p99)
        )
    console.print(t)
    console.print(
        f"one {host_class} replica at p99 <= {s.p99:g} s: predicted {c.predicted.rps:.2f} req/s "
        f"(at {c.predicted.concurrency:.1f} clients), measured {c.measured.rps:.2f} req/s "
        f"(at {c.measured.concurrency:.1f} clients): error {100 * c.error:+.1f}% "
        f"({'within' if abs(c.error) <= 0.2 else 'outside'} the 20% target)"
    )
