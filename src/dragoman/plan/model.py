"""The capacity model: what one replica of a host class serves within a p99 target, and how
many replicas a load needs.

For each measured level c of a host's figures (see figures.py):

- throughput for the target mix, by Little's law in a closed loop: c requests always in flight,
  each taking the mean latency on the mix, give X = c / mean latency. That is the steady
  state; the req/s a bench level reports is lower when a level is only a few rounds long,
  because its last requests drain with fewer clients (48 requests at 16 clients: 25% lower);
- p99 latency: the 99th percentile of alpha + beta * out + residual over every text of the
  mix and every residual of the level (the fit's error kept, not assumed away).

Capacity at a p99 target T: the highest throughput on the piecewise-linear (p99, req/s) curve
through the levels, in order of concurrency, whose p99 is at most T. Never extrapolated past
the highest measured level.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from dragoman.plan.figures import HostFigures, LevelFit

WORDS_TO_TOKENS = 1.3  # as the bench's workloads count them (eval/workloads.py)


@dataclass(frozen=True)
class Mix:
    words: tuple[tuple[float, float], ...]
    """(words of a text, weight)."""
    pairs: tuple[tuple[str, float], ...]
    """("en-fr", weight)."""

    def outputs(self, fig: HostFigures) -> list[tuple[float, float]]:
        """(output tokens, probability) of every length x pair of the mix."""
        wl = sum(w for _, w in self.words)
        wp = sum(w for _, w in self.pairs)
        out = []
        for words, a in self.words:
            for pair, b in self.pairs:
                target = pair.split("-", 1)[-1]
                out.append((fig.out_tokens(words * WORDS_TO_TOKENS, target), a * b / (wl * wp)))
        return out


def _positive(text: str) -> float | None:
    """A finite number above 0, else None (`not w <= 0` let NaN and inf through)."""
    try:
        x = float(text)
    except ValueError:
        return None
    return x if math.isfinite(x) and x > 0 else None


def parse_weights(spec: str, what: str) -> list[tuple[str, float]]:
    """ "8:0.5,40:0.3,150" -> [("8", 0.5), ("40", 0.3), ("150", 1.0)]."""
    items = []
    for part in (p.strip() for p in spec.split(",")):
        if not part:
            continue
        key, _, weight = part.partition(":")
        w = _positive(weight) if weight else 1.0
        if w is None or not key.strip():
            raise ValueError(f"{what}: {part!r} needs a name and a finite positive weight")
        items.append((key.strip(), w))
    if not items:
        raise ValueError(f"{what}: empty")
    return items


def parse_words(spec: str) -> tuple[tuple[float, float], ...]:
    lengths = []
    for key, w in parse_weights(spec, "words"):
        n = _positive(key)
        if n is None:
            raise ValueError(f"words: length {key!r} is not a finite number of words above 0")
        lengths.append((n, w))
    return tuple(lengths)


def parse_pairs(spec: str) -> tuple[tuple[str, float], ...]:
    """Pairs in lower case, of known and different codes (as eval's): `EN-FR` is en-fr, and an
    unknown target no longer falls back to the all-language ratio without a word."""
    from dragoman.languages import NAMES, parse_pair

    pairs = []
    for key, w in parse_weights(spec, "pairs"):
        src, tgt = parse_pair(key)
        if src == tgt or src not in NAMES or tgt not in NAMES:
            raise ValueError(f"pairs: {key!r}: two different codes of {', '.join(NAMES)}")
        pairs.append((f"{src}-{tgt}", w))
    return tuple(pairs)


def mix_from_specs(words: str, pairs: str) -> Mix:
    return Mix(parse_words(words), parse_pairs(pairs))


def weighted_quantile(values: list[tuple[float, float]], q: float) -> float:
    """q-quantile (0..1) of (value, weight) pairs: the smallest value whose cumulative weight
    reaches q of the total."""
    data = sorted(values)
    total = sum(w for _, w in data)
    acc = 0.0
    for v, w in data:
        acc += w
        if acc >= q * total - 1e-12:
            return v
    return data[-1][0]


@dataclass(frozen=True)
class LevelPrediction:
    concurrency: int
    rps: float
    p99: float
    mean_latency: float


def predict_level(level: LevelFit, mix_out: list[tuple[float, float]]) -> LevelPrediction:
    mean_out = sum(o * p for o, p in mix_out)
    mean_latency = level.latency(mean_out)
    rps = level.concurrency / mean_latency
    res = level.residuals or (0.0,)
    dist = [(level.latency(o) + e, p / len(res)) for o, p in mix_out for e in res]
    return LevelPrediction(level.concurrency, rps, weighted_quantile(dist, 0.99), mean_latency)


def predict(fig: HostFigures, mix: Mix) -> list[LevelPrediction]:
    outs = mix.outputs(fig)
    return [predict_level(level, outs) for level in fig.levels]


def outside_measured(fig: HostFigures, mix: Mix) -> str | None:
    """A warning when the mix's texts get fewer or more output tokens than some level of
    `fig` measured (the latency line is held at its ends there), else None."""
    outs = [o for o, _ in mix.outputs(fig)]
    if not fig.levels or all(level.covers(o) for level in fig.levels for o in outs):
        return None
    lo, hi = max(lv.min_out for lv in fig.levels), min(lv.max_out for lv in fig.levels)
    return (
        f"{fig.host_class}: the mix's texts get {min(outs):.0f}-{max(outs):.0f} output tokens, "
        f"outside the {lo:.0f}-{hi:.0f} every level measured: there a text's latency is held "
        "at the nearest measured one, not extrapolated (shorter texts may be faster, longer "
        "ones will be slower than predicted); bench a workload like the mix for real figures"
    )


@dataclass(frozen=True)
class Capacity:
    rps: float
    """Requests per second one replica serves with p99 at most the target (0: never)."""
    concurrency: float
    """Requests in flight on the replica at that point (interpolated)."""
    p99: float
    capped: bool
    """The target is met even at the highest measured level: capacity may be higher."""


def capacity_at(points: list[tuple[float, float, float]], target: float) -> Capacity:
    """points: (concurrency, p99, rps), in any order. See the module's docstring."""
    pts = sorted(points)
    best = Capacity(0.0, 0.0, pts[0][1] if pts else math.inf, False)
    for i, (c, p99, rps) in enumerate(pts):
        if p99 <= target and rps > best.rps:
            best = Capacity(rps, c, p99, i == len(pts) - 1)
        if i + 1 < len(pts):
            c2, p2, r2 = pts[i + 1]
            if p99 <= target < p2:
                f = (target - p99) / (p2 - p99)
                r = rps + f * (r2 - rps)
                if r > best.rps:
                    best = Capacity(r, c + f * (c2 - c), target, False)
    return best


def replica_capacity(fig: HostFigures, mix: Mix, p99_target: float) -> Capacity:
    return capacity_at([(p.concurrency, p.p99, p.rps) for p in predict(fig, mix)], p99_target)


@dataclass(frozen=True)
class SizePlan:
    fig: HostFigures
    capacity: Capacity
    replicas: int
    """0 when one replica cannot meet the p99 target on this host class at all."""


def plan_size(
    fig: HostFigures, mix: Mix, rps: float, p99_target: float, headroom: float
) -> SizePlan:
    """Replicas so that each runs at `headroom` of its capacity at the peak rate: open-loop
    arrivals bunch up, and a closed loop at capacity has no slack left for them."""
    cap = replica_capacity(fig, mix, p99_target)
    n = math.ceil(rps / (cap.rps * headroom) - 1e-9) if cap.rps > 0 else 0
    return SizePlan(fig, cap, max(n, 1) if cap.rps > 0 else 0)
