"""Helpers of the `ray` suite: the cluster the conftest starts, waiting on conditions with
deadlines, and Serve's own view of replicas (state, PID, start time) from its controller."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

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


def echo_settings(**overrides: Any) -> RaySettings:
    base: dict[str, Any] = {
        "architecture": "echo",
        "languages": ["en", "fr", "de"],
        "ingress_cpus": 0.5,
        "health_check_period_s": 1.0,
        "status_interval": 0.2,
        "drain_seconds": 2.0,
        "cache_mib": 0,  # every text reaches a model replica
    }
    return RaySettings(**{**base, **overrides})
