"""Reading Prometheus registries as plain numbers: one pass over each registry's collectors,
then sums over label subsets and percentiles from histogram bucket deltas, as Prometheus'
`histogram_quantile` estimates them (linear within a bucket)."""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Mapping

from prometheus_client.registry import CollectorRegistry

Labels = frozenset[tuple[str, str]]
Raw = dict[str, list[tuple[Labels, float]]]
"""Sample name -> (labels, value) of every series of that name."""

INF = math.inf


def read(registries: Iterable[CollectorRegistry], prefixes: tuple[str, ...]) -> Raw:
    """The samples of the metric families whose names start with one of `prefixes`."""
    raw: Raw = {}
    for registry in registries:
        for family in registry.collect():
            if not family.name.startswith(prefixes):
                continue
            for s in family.samples:
                if not s.name.endswith("_created"):
                    raw.setdefault(s.name, []).append((frozenset(s.labels.items()), s.value))
    return raw


def _match(labels: Labels, want: Mapping[str, Collection[str]]) -> bool:
    have = dict(labels)
    return all(have.get(k) in v for k, v in want.items())


def total(raw: Raw, name: str, **want: Collection[str]) -> float | None:
    """The sum of `name` over its series whose labels match `want` (label -> allowed values);
    None when no series of that name exists."""
    series = raw.get(name)
    if series is None:
        return None
    return sum(v for labels, v in series if _match(labels, want))


def by_label(raw: Raw, name: str, label: str) -> dict[str, float]:
    out: dict[str, float] = {}
    for labels, v in raw.get(name, []):
        key = dict(labels).get(label, "")
        out[key] = out.get(key, 0.0) + v
    return out


def buckets(raw: Raw, name: str, **want: Collection[str]) -> dict[float, float]:
    """Cumulative counts by upper bound of histogram `name` (its `_bucket` samples), summed
    over the matching series."""
    out: dict[float, float] = {}
    for labels, v in raw.get(f"{name}_bucket", []):
        if _match(labels, want):
            le = float(dict(labels)["le"])
            out[le] = out.get(le, 0.0) + v
    return out


def quantile(q: float, now: Mapping[float, float], then: Mapping[float, float]) -> float | None:
    """The q-quantile of what was observed between two readings of one histogram; None when
    nothing was. Past the highest finite bound it answers that bound (as Prometheus does)."""
    bounds = sorted(now)
    counts = [now[b] - then.get(b, 0.0) for b in bounds]
    if not counts or counts[-1] <= 0:
        return None
    rank = q * counts[-1]
    lower, below = 0.0, 0.0
    for bound, count in zip(bounds, counts, strict=True):
        if count >= rank:
            if bound == INF:
                return lower
            if count == below:
                return bound
            return lower + (bound - lower) * (rank - below) / (count - below)
        lower, below = bound, count
    return lower
