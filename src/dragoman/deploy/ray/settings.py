"""`dragoman deploy ray` settings: everything `dragoman serve` takes (models, pairs, engine and
API settings, from the same flags, DRAGOMAN_ variables and --config file) plus how the Ray
Serve app is laid out. Fields left unset are derived from the serve settings and the host."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field, model_validator

from dragoman import __version__
from dragoman.service.settings import ServeSettings


class RaySettings(ServeSettings):
    ray_address: str | None = None
    """Ray cluster to attach to (`auto`, or `ray://host:10001`); unset: start a local one here
    (stopped again on exit)."""

    ray_num_cpus: int | None = Field(default=None, ge=1)
    """Logical CPUs of a local cluster started here; default: this machine's, raised to fit
    the ingress and every model's min_replicas (Ray's CPUs decide placement only)."""

    ray_object_store_mib: int = Field(default=256, ge=75)
    """Object store of a local cluster started here. Small: dragoman passes texts, not tensors,
    and a container's small /dev/shm otherwise ends in OOM kills."""

    fast_path: bool = True
    """Ray Serve's own throughput settings for the request path (its RAY_SERVE_THROUGHPUT_
    OPTIMIZED set, less direct ingress, which --ray-ingress decides): user code and the router
    on each replica's event loop instead of extra threads, gRPC between replicas, buffered
    request logs. Measured here: a third of the added latency (benchmarks/results/ray-*).
    Applied to a local cluster started here and written into the Serve config's runtime_env;
    a cluster you attach to keeps its own proxy settings."""

    ray_ingress: Literal["haproxy", "proxy"] = "haproxy"
    """How HTTP reaches the app on a local cluster started here. `haproxy`: Serve's HAProxy
    ingress, each ingress replica serving HTTP itself behind HAProxy (no Ray call on the way
    in), a request its replica died on sent again to another (deploy/ray/haproxy.py).
    `proxy`: Serve's Python HTTP proxy, which hands each request to a replica over Ray. A
    cluster you attach to, and the RayService, keep Serve's proxy unless their processes
    get the environment `haproxy` sets."""

    ray_layout: Literal["split", "whole", "auto"] = "auto"
    """`split`: an ingress deployment (the API) in front of one deployment per model group,
    scaled each on its own load; a text whose replica died is retried by the ingress. `whole`:
    one deployment whose replicas are each a whole server (the API and every group's engine,
    as `dragoman serve` runs them, llama.cpp included where the host picks it): no Ray call on
    a request's way, but the replicas scale as one, each carries every model, and only
    HAProxy's replay covers a request whose replica died (Serve's Python proxy fails it).
    `auto` (the default): whole for one model group behind HAProxy, else split
    (app.layout)."""

    app_name: str = "dragoman"
    """Name of the Serve application."""

    min_replicas: int = Field(default=1, ge=1)
    """Fewest replicas of each model deployment. At least 1: a cold start is a model load, and
    a known pair must never wait on one."""

    max_replicas: int = Field(default=1, ge=1)
    """Most replicas of each model deployment; above min_replicas, Serve autoscales between
    them on ongoing requests per replica."""

    max_ongoing_requests: int | None = Field(default=None, ge=1)
    """Requests (texts) one model replica takes at once; default max_num_seqs, so each
    replica's engine batch can fill while the rest wait at the ingress's handle."""

    target_fraction: float = Field(default=0.75, gt=0, le=1)
    """Autoscaling target: ongoing requests per replica = this x max_ongoing_requests. Below 1,
    a replica is added before the engines' batches are full and requests start to queue."""

    max_queued_requests: int | None = Field(default=None, ge=-1)
    """Requests queued at the ingress for one model deployment before Serve refuses more
    (BackPressureError, retried with backoff, then 429). Default: the admission bound
    (--max-admitted); -1: no bound."""

    upscale_delay_s: float = Field(default=30.0, ge=0)
    """Seconds the load must stay above target before a replica is added (Serve's default)."""

    downscale_delay_s: float = Field(default=300.0, ge=0)
    """Seconds the load must stay below target before a replica is removed."""

    look_back_period_s: float = Field(default=30.0, gt=0)
    """Window over which ongoing requests are averaged for an autoscaling decision."""

    health_check_period_s: float | None = Field(default=None, gt=0)
    """Seconds between Serve's health checks of a model replica (its engine's health);
    default: --engine-check-interval."""

    health_check_timeout_s: float = Field(default=30.0, gt=0)
    """A health check that takes longer fails, and the replica is restarted."""

    replica_cpus: float | None = Field(default=None, gt=0)
    """Logical CPUs Ray reserves for one model replica; default from the host: the CPUs the
    engine's threads are bound to (0.5 on the echo architecture, which has no engine)."""

    replica_gpus: float | None = Field(default=None, ge=0)
    """GPUs for one model replica; default: --gpu-memory-utilization on a GPU host (a
    fraction, so several replicas can share a card as their memory shares allow), else 0."""

    ingress_replicas: int = Field(default=1, ge=1)
    """Replicas of the ingress deployment (the HTTP API; no engine)."""

    ingress_cpus: float = Field(default=1.0, gt=0)
    """Logical CPUs Ray reserves for one ingress replica."""

    ingress_max_ongoing_requests: int = Field(default=1000, ge=1)
    """HTTP requests one ingress replica holds at once (Serve's default of 5 would cap every
    client of the cluster at 5 requests); admission control answers beyond its bound anyway."""

    retry_attempts: int = Field(default=6, ge=1)
    """Tries of one text on a model deployment: a dead replica is routed around at once, a
    full queue waits 50 ms x 1.5^n (+-20%) between tries."""

    status_interval: float = Field(default=1.0, gt=0)
    """Seconds between the ingress's reads of which model deployments have live replicas while
    one has none or a replica was just lost (ten times longer otherwise): a known pair
    without one is 503 with Retry-After at once, not a hung request."""

    config_out: Path | None = None
    """Write the Serve config (YAML, checked against Ray's schema) to this file and exit:
    `serve deploy FILE` runs it on a cluster."""

    rayservice_out: Path | None = None
    """Write a KubeRay RayService manifest embedding the Serve config to this file and exit."""

    image: str = f"dragoman:{__version__}"
    """Container image of the RayService's Ray pods (dragoman with the `ray` extra); by
    default this version's tag, as `deploy k8s`'s (never `latest`: a restarted pod could run
    another version)."""

    worker_memory_gib: float = Field(default=8.0, gt=0)
    """Memory of one RayService worker pod (one model replica and its engine's KV cache)."""

    @model_validator(mode="after")
    def _replicas(self) -> RaySettings:
        if self.max_replicas < self.min_replicas:
            raise ValueError(
                f"max_replicas ({self.max_replicas}) must be at least min_replicas "
                f"({self.min_replicas})"
            )
        return self

    def serve_env(self) -> dict[str, str]:
        """Environment of Serve's processes for --fast-path (empty without it). Every replica
        call is async, so nothing blocks the shared loop; blocking reads go to threads."""
        if not self.fast_path:
            return {}
        return {
            "RAY_SERVE_RUN_USER_CODE_IN_SEPARATE_THREAD": "0",
            "RAY_SERVE_RUN_ROUTER_IN_SEPARATE_LOOP": "0",
            "RAY_SERVE_USE_GRPC_BY_DEFAULT": "1",
            "RAY_SERVE_REQUEST_PATH_LOG_BUFFER_SIZE": "1000",
            "RAY_SERVE_LOG_TO_STDERR": "0",
        }

    def cluster_env(self) -> dict[str, str]:
        """Environment of a local cluster started here, read by its raylet at start: Serve's
        fast path, its HAProxy ingress (--ray-ingress haproxy), and workers at the priority of
        every other process (Ray's default nice 15 puts the replicas, which are the service, behind
        any busy neighbour)."""
        env = {**self.serve_env(), "RAY_worker_niceness": "0"}
        if self.ray_ingress == "haproxy":
            from dragoman.deploy.ray import haproxy

            env.update(haproxy.serve_env())
        return env

    def replica_max_ongoing(self) -> int:
        return self.max_ongoing_requests or self.max_num_seqs

    def target_ongoing(self) -> float:
        return max(1.0, round(self.target_fraction * self.replica_max_ongoing(), 1))

    def queued_limit(self) -> int:
        if self.max_queued_requests is not None:
            return self.max_queued_requests
        return self.admission_limit() or -1
