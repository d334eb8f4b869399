"""A local Ray cluster on 127.0.0.1 for the `ray` suite: started once for this folder, with
Serve's HTTP proxy on a free port, and stopped after it. Autoscaling metrics are pushed every
0.2 s instead of 10 s so that scaling decisions come in seconds."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from dragoman.deploy.ray.settings import RaySettings
from tests.deploy.ray._cluster import APP, Cluster, local_cluster

# Read by Serve's controller and replicas when they start: set before the cluster starts.
FAST_AUTOSCALING = {
    "RAY_SERVE_REPLICA_AUTOSCALING_METRIC_PUSH_INTERVAL_S": "0.2",
    "RAY_SERVE_HANDLE_AUTOSCALING_METRIC_PUSH_INTERVAL_S": "0.2",
    "RAY_SERVE_AUTOSCALING_METRIC_RECORD_INTERVAL_FACTOR": "0.1",
}


@pytest.fixture(scope="package")
def cluster() -> Iterator[Cluster]:
    pytest.importorskip(
        "ray.serve", reason="the `ray` extra is not installed: pip install '.[ray]'"
    )
    # The suite runs what `dragoman deploy ray` runs: its fast path included.
    env = {**FAST_AUTOSCALING, **RaySettings(fast_path=True).cluster_env()}
    with local_cluster(env) as cluster:
        yield cluster


@pytest.fixture
def deployed(cluster: Cluster) -> Iterator[Cluster]:
    """The cluster, with the test's app deleted afterwards (its replicas drain and stop)."""
    yield cluster
    from ray import serve

    serve.delete(APP)
