"""Helpers of the `ray` suite: the cluster the conftest starts, waiting on conditions with
deadlines, and Serve's own view of replicas (state, PID, start time) from its controller."""

from __future__ import annotations

import contextlib
import os
import signal
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from dragoman.deploy.ray.app import INGRESS, SERVER
from dragoman.deploy.ray.settings import RaySettings

APP = "dragoman"
ECHO_MODEL = "echo:qwen2.5-coder-0.5b-instruct"
ECHO_DEPLOYMENT = "model-echo-qwen2.5-coder-0.5b-instruct"


def wait_for(what: str, check: Callable[[], Any], timeout: float, every: float = 0.05) -> Any:
    """Poll `check` until it returns something truthy; fail naming `what` at the deadline."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            pytest.fail(f"timed out after {timeout:g} s waiting for {what}")
        time.sleep(every)


@dataclass(frozen=True)
class Replica:
    replica_id: str
    state: str
    pid: int | None
    start_time_s: float


@dataclass
class Cluster:
    url: str

    def deploy(self, settings: RaySettings) -> float:
        """Run the app (replacing any other); the seconds until every replica was up."""
        from ray import serve

        from dragoman.deploy.ray.app import build_application

        started = time.monotonic()
        serve.run(build_application(settings), name=APP, route_prefix="/")
        return time.monotonic() - started

    def replicas(self, deployment: str) -> list[Replica]:
        """Serve's controller's record of a deployment's replicas (the same data as
        `serve status -v`; the state API would need the dashboard, which the suite leaves off)."""
        from ray.serve.context import _get_global_client
        from ray.serve.schema import ServeInstanceDetails

        details = ServeInstanceDetails(**_get_global_client().get_serve_details())
        app = details.applications.get(APP)
        if app is None or deployment not in app.deployments:
            return []
        return [
            Replica(r.replica_id, str(getattr(r.state, "value", r.state)), r.pid, r.start_time_s)
            for r in app.deployments[deployment].replicas
        ]

    def running(self, deployment: str) -> int:
        return sum(r.state == "RUNNING" for r in self.replicas(deployment))

    def routed(self) -> bool:
        """Whether HAProxy, when it is the ingress, sends traffic to every running replica of
        the ingress deployment and to nothing else, such as a replica of an app deleted
        before (haproxy.routed); always true behind Serve's proxy."""
        from dragoman.deploy.ray import haproxy

        if not haproxy.fronts():
            return True
        running = {
            r.replica_id
            for deployment in (INGRESS, SERVER)  # the split layout's, the whole layout's
            for r in self.replicas(deployment)
            if r.state == "RUNNING"
        }
        return bool(running) and haproxy.routed(APP) == running


def echo_settings(**overrides: Any) -> RaySettings:
    base: dict[str, Any] = {
        "architecture": "echo",
        "languages": ["en", "fr", "de"],
        "ingress_cpus": 0.5,
        "health_check_period_s": 1.0,
        "status_interval": 0.2,
        "drain_seconds": 2.0,
        "cache_mib": 0,  # every text reaches a model replica
        "ray_layout": "split",  # the suite's tests of the whole layout say so
    }
    if overrides.get("models"):  # each entry says its languages; --languages is refused
        del base["languages"]
    return RaySettings(**{**base, **overrides})


@contextlib.contextmanager
def local_cluster(env: dict[str, str]) -> Iterator[Cluster]:
    """A local Ray cluster on 127.0.0.1 (8 logical CPUs, small object store, no dashboard) with
    Serve's HTTP proxy on a free port; `env`, read by Serve's processes as they start, is set
    first and removed after."""
    import ray
    from ray import serve

    from dragoman.bench.servers import free_port

    os.environ.update(env)
    ray.init(
        address="local",  # our own cluster, whatever else runs on this machine
        num_cpus=8,  # logical: placement only; the replicas share this machine's real cores
        include_dashboard=False,
        object_store_memory=200 * 2**20,
        _node_ip_address="127.0.0.1",
        log_to_driver=False,
    )
    try:
        port = free_port()
        serve.start(http_options={"host": "127.0.0.1", "port": port})
        yield Cluster(f"http://127.0.0.1:{port}")
    finally:
        serve.shutdown()
        ray.shutdown()
        for key in env:
            os.environ.pop(key, None)


def kill_a_replica(cluster: Cluster, deployment: str) -> tuple[float, float, Replica]:
    """SIGKILL the first running replica of `deployment` once the ingress routes to every one
    (Cluster.routed) and wait until a replacement runs: when it was killed, when the
    replacement ran (time.monotonic()), and the replacement."""
    wait_for("the ingress to route to every replica", cluster.routed, 60)
    before = cluster.replicas(deployment)
    victim = before[0]
    assert victim.pid is not None
    killed = time.monotonic()
    os.kill(victim.pid, signal.SIGKILL)

    def replacement() -> list[Replica]:
        old = {r.replica_id for r in before}
        return [r for r in cluster.replicas(deployment) if r.replica_id not in old]

    wait_for("a replacement replica", replacement, 60)
    new = wait_for(
        "the replacement to run", lambda: [r for r in replacement() if r.state == "RUNNING"], 120
    )[0]
    return killed, time.monotonic(), new
