"""Model groups: what becomes one Ray Serve deployment. A group is one model of the server's
settings (a `[[models]]` entry, or the single `--model`) with the language pairs it serves, so
pairs that share a model share its replicas. Resources per replica come from the host."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from dragoman.host import Host
from dragoman.languages import Pair, pairs_from_languages
from dragoman.settings import ServeSettings


@dataclass(frozen=True)
class ModelGroup:
    key: str
    """Served name: in answers, /v1/models and the deployment's name."""
    model: str
    """Catalogue name, local directory or hub id."""
    prompt: Literal["chat", "few-shot"]
    languages: tuple[str, ...]
    pairs: tuple[Pair, ...]

    @property
    def deployment(self) -> str:
        """The Serve deployment's name (Serve allows no `#` or `/`; keep it readable)."""
        return "model-" + re.sub(r"[^A-Za-z0-9._-]+", "-", self.key)

    def root(self, settings: ServeSettings) -> str:
        """Where the weights live (what /v1/models reports as `root`), without loading them."""
        from dragoman.models.catalogue import CATALOGUE
        from dragoman.models.prepare import model_dir

        if settings.architecture == "echo":
            return self.key
        if self.model in CATALOGUE:
            return str(model_dir(settings.data_dir, self.model))
        return self.model


def model_groups(settings: ServeSettings) -> list[ModelGroup]:
    """One group per `[[models]]` entry, else one for `--model` with every pair among its
    languages (as `dragoman serve` serves them)."""
    from dragoman.api.serve import languages_for
    from dragoman.models.catalogue import CATALOGUE

    if settings.models:
        routes = settings.model_routes()
        groups = []
        for spec in settings.models:
            pairs = tuple(sorted(p for p, name in routes.items() if name == spec.name))
            langs = tuple(sorted({c for p in pairs for c in p}))
            groups.append(ModelGroup(spec.name, spec.model, spec.prompt_format(), langs, pairs))
        return groups
    langs = languages_for(settings.model, settings.languages)
    entry = CATALOGUE.get(settings.model)
    name = f"echo:{settings.model}" if settings.architecture == "echo" else settings.model
    pairs = tuple(sorted(pairs_from_languages(langs)))
    return [ModelGroup(name, settings.model, entry.prompt if entry else "chat", langs, pairs)]


@dataclass(frozen=True)
class ReplicaResources:
    cpus: float
    gpus: float
    reason: str


def replica_resources(
    settings: ServeSettings,
    host: Host,
    cpus: float | None = None,
    gpus: float | None = None,
) -> ReplicaResources:
    """What Ray reserves for one model replica: explicit values win; else the CPUs the engine
    plan binds its threads to on this host, and a GPU share equal to the engine's memory
    share. Ray's resources are logical: they decide placement, not what a process may use."""
    from dragoman.engine.plan import choose_threads

    if settings.architecture == "echo":
        return ReplicaResources(cpus or 0.5, gpus or 0.0, "echo: no engine, half a CPU")
    gpu_share = settings.gpu_memory_utilization if host.gpu else 0.0
    want_gpus = gpus if gpus is not None else gpu_share
    if cpus is not None:
        return ReplicaResources(cpus, want_gpus, "set explicitly")
    if host.gpu:
        return ReplicaResources(1.0, want_gpus, "GPU host: one CPU feeds the engine")
    threads = choose_threads(settings.cpu_threads, host).value
    n = len(host.usable_cpus)
    bound = n - 1 if threads == "auto" else _count(threads) or n
    reason = f"the engine's threads ({threads}) on this host's {n} CPUs"
    return ReplicaResources(float(max(1, bound)), want_gpus, reason)


def _count(cpu_list: str) -> int:
    """CPUs in a list such as `0-1,4`; 0 for `nobind` or anything else."""
    total = 0
    for part in cpu_list.split(","):
        lo, _, hi = part.partition("-")
        if not lo.isdigit() or (hi and not hi.isdigit()):
            return 0
        total += int(hi or lo) - int(lo) + 1
    return total
