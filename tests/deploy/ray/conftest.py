"""A local Ray cluster on 127.0.0.1 for the `ray` suite: started once for this folder, with
Serve's HTTP proxy on a free port, and stopped after it. Autoscaling metrics are pushed every
0.2 s instead of 10 s so that scaling decisions come in seconds."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from dragoman.bench.servers import free_port
from dragoman.deploy.ray.settings import RaySettings
from tests.deploy.ray._cluster import APP, Cluster

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
    import ray
    from ray import serve

    # The suite runs what `dragoman deploy ray` runs: its fast path included.
    env = {**FAST_AUTOSCALING, **RaySettings(fast_path=True).cluster_env()}
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


@pytest.fixture
def deployed(cluster: Cluster) -> Iterator[Cluster]:
    """The cluster, with the test's app deleted afterwards (its replicas drain and stop)."""
    yield cluster
    from ray import serve

    serve.delete(APP)
