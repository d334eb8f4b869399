"""`dragoman deploy k8s` settings: everything `dragoman serve` takes (models, pairs, engine and
API settings, from the same flags, DRAGOMAN_ variables and --config file) plus how the
Kubernetes objects are laid out and sized. Sizes left unset come from the committed bench
results of the nodes' host class."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field, model_validator

from dragoman import __version__
from dragoman.deploy.k8s.groups import STORE_URLS
from dragoman.service.cache_store import has_password
from dragoman.service.settings import ServeSettings


class K8sSettings(ServeSettings):
    out: Path = Path("deploy/k8s")
    """Folder to write the manifests into (one YAML file per model group, one for the route)."""

    name: str = Field(default="dragoman", pattern=r"^[a-z]([-a-z0-9]{0,30}[a-z0-9])?$")
    """Prefix of every object's name, and their app.kubernetes.io/instance label."""

    namespace: str | None = None
    """Namespace of the objects; unset: the one kubectl applies them to."""

    image: str = f"dragoman:{__version__}"
    """Container image with dragoman installed (the `cpu` and `model` extras for the
    catalogue's models); its entry point is not used: the command is set."""

    replicas: int = Field(default=1, ge=1)
    """Replicas of each model group at least (the autoscaler's minimum). At least 1: a cold
    start is a model load."""

    max_replicas: int = Field(default=4, ge=1)
    """Replicas of each model group at most (the autoscaler's maximum)."""

    autoscaler: Literal["hpa", "keda", "none"] = "hpa"
    """hpa: an autoscaling/v2 HorizontalPodAutoscaler on dragoman_admitted_in_flight per pod
    (needs prometheus-adapter; its rule is written beside the manifests); keda: a KEDA
    ScaledObject with a Prometheus query; none: fixed replicas. Never both on one
    Deployment: KEDA makes its own HPA."""

    # Finite, and at least a thousandth: manifests write millis (1e-9 became "0m", inf a crash).
    scale_target: float | None = Field(default=None, ge=0.001, allow_inf_nan=False)
    """Admitted texts per pod the autoscaler aims at. Default: max_num_seqs, a full engine
    batch: above it, texts wait in the engine's queue."""

    prometheus_url: str = "http://prometheus-server.monitoring.svc"
    """Prometheus that KEDA's trigger queries (--autoscaler keda)."""

    route_replicas: int = Field(default=2, ge=1)
    """Replicas of `dragoman route` in front."""

    route_port: int = Field(default=8080, ge=1, le=65535)
    """Port of the route's Service and container."""

    route_cpu: float = Field(default=0.5, ge=0.001, allow_inf_nan=False)
    """CPU request of a route pod: a proxy hop costs about 1 ms of CPU a request."""

    route_memory_mib: int = Field(default=256, ge=64)
    """Memory request of a route pod: an API process held 162.7 MiB after a 300 s soak."""

    host_class: str | None = None
    """Host class of the nodes (avx512-bf16, avx2, ...: `dragoman info`): which bench results
    size the pods. Default: this machine's."""

    bench_results: Path = Path("benchmarks/results")
    """Folder of committed `dragoman bench` results (results.json with footprint.json)."""

    cpu: float | None = Field(default=None, ge=0.001, allow_inf_nan=False)
    """CPUs of a model pod (requests = limits). Default: the CPUs the bench's engine used."""

    memory_mib: int | None = Field(default=None, ge=256)
    """Memory of a model pod (requests = limits). Default: the measured peak of the server and
    its engine processes, plus a quarter, in whole 256 MiB."""

    start_seconds: float | None = Field(default=None, gt=0, allow_inf_nan=False)
    """A model pod's measured load time (start to /ready). Default: the bench's."""

    prestop_seconds: int = Field(default=5, ge=0)
    """preStop sleep before SIGTERM, so endpoints drop the pod before it stops taking work."""

    @model_validator(mode="after")
    def _replicas(self) -> K8sSettings:
        if self.max_replicas < self.replicas:
            raise ValueError(f"max_replicas ({self.max_replicas}) < replicas ({self.replicas})")
        if self.port == 0:
            raise ValueError("port 0 (any free port) has no place in a manifest: give a port")
        return self

    @property
    def required_keys(self) -> list[str]:
        """The keys Secret's entries the settings asked for: the pods must not start without
        them (api-keys for --api-keys-file or DRAGOMAN_API_KEYS, metrics-key for
        --metrics-key, cache-url and glossary-url for a store URL with a password)."""
        asked = [
            ("api-keys", bool(self.api_keys_file or self.api_keys)),
            ("metrics-key", bool(self.metrics_key)),
        ]
        asked += [(key, has_password(getattr(self, f))) for f, key in STORE_URLS.items()]
        return [key for key, wanted in asked if wanted]
