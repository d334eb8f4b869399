"""SIGKILL of one of two echo replicas under 8 closed-loop clients, per Ray layout: how many
requests fail and how long until two replicas run again. The `ray` suite asserts 0 failures
for the split layout (its ingress retries); this measures what the whole layout, whose
requests Serve's proxy sends straight to a replica, loses. Reuses the suite's helpers.

    .venv/bin/python benchmarks/ray/replica_loss.py   # the table of layouts/replica-loss.md
"""

from __future__ import annotations

import os
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

from tests.deploy.ray._cluster import ECHO_DEPLOYMENT, Cluster, echo_settings, wait_for
from tests.deploy.ray._load import Load


def one(cluster: Cluster, layout: str) -> str:
    from ray import serve

    deployment = "server" if layout == "whole" else ECHO_DEPLOYMENT
    settings = echo_settings(min_replicas=2, max_replicas=2, echo_delay=0.02, ray_layout=layout)
    cluster.deploy(settings)
    before = cluster.replicas(deployment)
    victim = before[0]
    assert victim.pid is not None
    with Load(cluster.url, clients=8, max_seconds=180) as load:
        wait_for("the load", lambda: load.ok >= 100, 60)
        killed = time.monotonic()
        os.kill(victim.pid, signal.SIGKILL)
        old = {r.replica_id for r in before}
        wait_for(
            "the replacement to run",
            lambda: [
                r
                for r in cluster.replicas(deployment)
                if r.replica_id not in old and r.state == "RUNNING"
            ],
            120,
        )
        recovery = time.monotonic() - killed
        at = load.ok
        wait_for("traffic after recovery", lambda: load.ok >= at + 100, 60)
    serve.delete("dragoman")
    kinds = sorted({e.split(" ", 1)[0] for e in load.errors})
    return (
        f"| {layout} | {load.sent} | {len(load.errors)} | {', '.join(kinds) or '-'} "
        f"| {recovery:.1f} s |"
    )


def main() -> None:
    import ray
    from ray import serve

    from dragoman.bench.servers import free_port
    from dragoman.deploy.ray.settings import RaySettings

    os.environ.update(RaySettings(fast_path=True).cluster_env())
    ray.init(
        address="local",
        num_cpus=8,
        include_dashboard=False,
        object_store_memory=200 * 2**20,
        _node_ip_address="127.0.0.1",
        log_to_driver=False,
    )
    try:
        port = free_port()
        serve.start(http_options={"host": "127.0.0.1", "port": port})
        cluster = Cluster(f"http://127.0.0.1:{port}")
        print("| layout | requests | failed | failures | 2 replicas running again after |")
        print("|---|---|---|---|---|")
        for layout in ("split", "whole"):
            print(one(cluster, layout), flush=True)
        print("\nEcho engine, 20 ms a text, 8 closed-loop clients; SIGKILL of one of two replicas.")
    finally:
        serve.shutdown()
        ray.shutdown()


if __name__ == "__main__":
    main()
