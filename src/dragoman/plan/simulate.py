"""A traffic day against N replicas with admission control, as a discrete-event simulation
(simpy).

Arrivals are Poisson with a rate that follows a diurnal curve (a cosine from `trough` x peak
at night to the peak at `peak_hour`) and short bursts at random times of the day (the rate x
`burst_factor` for `burst_seconds`). Each request is one text drawn from the mix. In front sits
a router like `dragoman route`: it sends a request to the replica with the fewest admitted
texts; a replica admits at most `admission_limit` texts (running plus waiting), and when every
replica is at its bound the request is refused (429), as `--max-admitted` does.

A replica runs `slots` (max_num_seqs) texts at once; the others wait in its queue. A text that
starts while n texts run (itself included) takes alpha(n) + beta(n) x its output tokens plus a
residual drawn from the measured level nearest n (figures.py), alpha and beta interpolated
between the measured levels. The batch is fixed at the text's start: a text does not slow
down when others join after it (continuous batching does slow it), so heavy hours read a
little optimistic; the planner's headroom covers that.
"""

from __future__ import annotations

import bisect
import math
import random
from collections.abc import Generator
from dataclasses import dataclass
from typing import Any

import simpy

from dragoman.plan.figures import HostFigures, LevelFit
from dragoman.plan.model import Mix
from dragoman.stats import percentile

DAY = 24 * 3600.0


@dataclass(frozen=True)
class Day:
    peak_rps: float
    trough: float = 0.25
    peak_hour: float = 14.0
    bursts: int = 6
    burst_factor: float = 2.0
    burst_seconds: float = 120.0
    hours: int = 24

    def base(self, t: float) -> float:
        """Requests/s at t seconds into the day, bursts aside."""
        phase = 2 * math.pi * (t / 3600.0 - self.peak_hour) / 24.0
        return self.peak_rps * (self.trough + (1 - self.trough) * 0.5 * (1 + math.cos(phase)))


@dataclass(frozen=True)
class HourStats:
    hour: int
    arrivals: int
    rejected: int
    p50: float
    p99: float

    @property
    def rejected_share(self) -> float:
        return self.rejected / self.arrivals if self.arrivals else 0.0


@dataclass(frozen=True)
class DayResult:
    hours: list[HourStats]
    arrivals: int
    rejected: int
    p99: float
    bursts: list[float]

    @property
    def rejected_share(self) -> float:
        return self.rejected / self.arrivals if self.arrivals else 0.0


class ServiceModel:
    """Latency of a text that starts with n texts running, from the levels at or under the
    engine's batch width (past it the measured alpha holds a queue, which the simulation
    models itself)."""

    def __init__(self, fig: HostFigures) -> None:
        levels = [f for f in fig.levels if f.concurrency <= fig.max_num_seqs] or fig.levels[:1]
        self.levels: list[LevelFit] = levels
        self.cs = [f.concurrency for f in levels]

    def _interp(self, n: int) -> tuple[float, float, LevelFit]:
        i = bisect.bisect_left(self.cs, n)
        if i == 0:
            f = self.levels[0]
            return f.alpha, f.beta, f
        if i == len(self.cs):
            f = self.levels[-1]
            return f.alpha, f.beta, f
        lo, hi = self.levels[i - 1], self.levels[i]
        w = (n - lo.concurrency) / (hi.concurrency - lo.concurrency)
        near = hi if w >= 0.5 else lo
        return lo.alpha + w * (hi.alpha - lo.alpha), lo.beta + w * (hi.beta - lo.beta), near

    def latency(self, n: int, out_tokens: float, rng: random.Random) -> float:
        alpha, beta, near = self._interp(n)
        residual = rng.choice(near.residuals) if near.residuals else 0.0
        return max(0.01, alpha + beta * out_tokens + residual)


class _Replica:
    def __init__(self, env: simpy.Environment, slots: int) -> None:
        self.slots = simpy.Resource(env, capacity=slots)
        self.admitted = 0


def simulate_day(
    fig: HostFigures,
    mix: Mix,
    day: Day,
    replicas: int,
    admission_limit: int,
    seed: int = 0,
) -> DayResult:
    # Separate streams: the arrivals (times, bursts, texts) are the same whatever the
    # replicas, so runs that differ only in replicas compare the same day.
    rng = random.Random(seed)
    service_rng = random.Random(f"{seed}-service")
    env = simpy.Environment()
    pool = [_Replica(env, fig.max_num_seqs) for _ in range(replicas)]
    model = ServiceModel(fig)
    outs = mix.outputs(fig)
    out_values = [o for o, _ in outs]
    out_cum: list[float] = []
    acc = 0.0
    for _, p in outs:
        acc += p
        out_cum.append(acc)
    end = day.hours * 3600.0
    bursts = sorted(rng.uniform(0, end) for _ in range(day.bursts))
    latencies: list[list[float]] = [[] for _ in range(day.hours)]
    arrivals = [0] * day.hours
    rejected = [0] * day.hours

    def rate(t: float) -> float:
        i = bisect.bisect_right(bursts, t)
        in_burst = i > 0 and t - bursts[i - 1] < day.burst_seconds
        return day.base(t) * (day.burst_factor if in_burst else 1.0)

    def text(replica: _Replica, hour: int, out_tokens: float) -> Generator[Any, Any, None]:
        arrived = env.now
        with replica.slots.request() as slot:
            yield slot
            n = replica.slots.count
            yield env.timeout(model.latency(n, out_tokens, service_rng))
        replica.admitted -= 1
        latencies[hour].append(env.now - arrived)

    def source() -> Generator[Any, Any, None]:
        top = day.peak_rps * max(1.0, day.burst_factor)
        while True:
            yield env.timeout(rng.expovariate(top))
            t = env.now
            if t >= end:
                return
            if rng.random() * top > rate(t):
                continue  # thinning: a Poisson process with the rate of the moment
            hour = int(t // 3600)
            arrivals[hour] += 1
            i = min(bisect.bisect_left(out_cum, rng.random() * acc), len(out_values) - 1)
            target = min(pool, key=lambda r: r.admitted)
            if target.admitted >= admission_limit:
                rejected[hour] += 1
                continue
            target.admitted += 1
            env.process(text(target, hour, out_values[i]))

    env.process(source())
    env.run()
    hours = [
        HourStats(
            h, arrivals[h], rejected[h], percentile(latencies[h], 50), percentile(latencies[h], 99)
        )
        for h in range(day.hours)
    ]
    every = [x for h in latencies for x in h]
    return DayResult(hours, sum(arrivals), sum(rejected), percentile(every, 99), bursts)
