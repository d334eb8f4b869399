"""Model groups on Ray: each group (deploy/groups.py) becomes one Ray Serve deployment, named
after its served name. Resources per replica come from the host."""

from __future__ import annotations

import re
from dataclasses import dataclass

from dragoman.deploy import groups
from dragoman.host import Host
from dragoman.service.settings import ServeSettings


@dataclass(frozen=True)
class ModelGroup(groups.ModelGroup):
    """A model group as one Serve deployment."""

    @property
    def deployment(self) -> str:
        """The Serve deployment's name (Serve allows no `#` or `/`; keep it readable)."""
        return "model-" + re.sub(r"[^A-Za-z0-9._-]+", "-", self.key)

    def root(self, settings: ServeSettings) -> str:
        """What the group's engine loads, in the form of weights it picks (what /v1/models
        reports as `root`), without loading it."""
        from dragoman.engine.vllm_engine import loaded_model_path
        from dragoman.errors import ModelError

        if settings.architecture == "echo":
            return self.key
        try:
            return loaded_model_path(settings.model_copy(update={"model": self.model}))
        except ModelError:  # not prepared on this node (yet): its replicas prepare it
            return self.model


def model_groups(settings: ServeSettings) -> list[ModelGroup]:
    """The server's model groups (deploy/groups.py), one Serve deployment each."""
    return [
        ModelGroup(g.key, g.model, g.prompt, g.languages, g.pairs)
        for g in groups.model_groups(settings)
    ]


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
    from dragoman.engine.host_defaults import choose_threads

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
