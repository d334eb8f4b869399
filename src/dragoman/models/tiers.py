"""Quality tiers of a multi-model server: which `[[models]]` entry serves each pair in each tier,
and which one a request without a `quality` hint gets. Checked once, when the settings load."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from dragoman.engine.protocol import Quality
from dragoman.languages import Pair, parse_pair
from dragoman.models.catalogue import CATALOGUE

if TYPE_CHECKING:
    from dragoman.service.settings import ModelSpec

ALL_PAIRS = "*"


def tier_routes(specs: Sequence[ModelSpec]) -> dict[Pair, dict[Quality, str]]:
    """Pair -> tier -> model name. Two entries may serve a pair only in different tiers."""
    names = [m.name for m in specs]
    if len(set(names)) != len(names):
        raise ValueError("models: names must be unique")
    routes: dict[Pair, dict[Quality, str]] = {}
    for spec in specs:
        tier = spec.quality_tier()
        for pair in spec.pair_list():
            tiers = routes.setdefault(pair, {})
            if tier in tiers:
                raise ValueError(
                    f"models: {pair[0]}-{pair[1]} is served by both {tiers[tier]!r} and "
                    f"{spec.name!r} in the {tier} tier (give one of them tier = "
                    f'"{"best" if tier == "fast" else "fast"}")'
                )
            tiers[tier] = spec.name
    return routes


def _marked(specs: Sequence[ModelSpec]) -> dict[Pair, str]:
    """Pair -> the entry whose `default_for` names it."""
    marked: dict[Pair, str] = {}
    for spec in specs:
        own = set(spec.pair_list())
        for item in spec.default_for:
            if item.strip() == ALL_PAIRS:
                pairs = own
            else:
                try:
                    pair = parse_pair(item)
                except ValueError as exc:
                    raise ValueError(f"model {spec.name!r}: default_for: {exc}") from None
                if pair not in own:
                    raise ValueError(
                        f"model {spec.name!r}: default_for names {item.strip()}, a pair it "
                        "does not serve"
                    )
                pairs = {pair}
            for pair in pairs:
                if marked.get(pair, spec.name) != spec.name:
                    raise ValueError(
                        f"models: {pair[0]}-{pair[1]} is marked default_for by both "
                        f"{marked[pair]!r} and {spec.name!r}"
                    )
                marked[pair] = spec.name
    return marked


def measured_default(pair: Pair, tiers: dict[Quality, str], models: dict[str, str]) -> str:
    """The default of a pair two tiers serve, by the catalogue's measurements: the best tier
    where its model's measured gain on the target earns its cost (`best_for`), else the fast
    tier. `models` maps entry names to their model (catalogue name or directory)."""
    best = CATALOGUE.get(models[tiers["best"]])
    if best is not None and pair[1] in best.best_for:
        return tiers["best"]
    return tiers["fast"]


def default_routes(specs: Sequence[ModelSpec]) -> dict[Pair, str]:
    """Pair -> the entry that translates it without a hint: the one marked `default_for` it,
    else the only one serving it, else the catalogue's measured choice between the tiers."""
    routes = tier_routes(specs)
    marked = _marked(specs)
    models = {spec.name: spec.model for spec in specs}
    out: dict[Pair, str] = {}
    for pair, tiers in routes.items():
        if pair in marked:
            out[pair] = marked[pair]
        elif len(tiers) == 1:
            out[pair] = next(iter(tiers.values()))
        else:
            out[pair] = measured_default(pair, tiers, models)
    return out
