"""SIGKILL of one of two echo replicas under 8 closed-loop clients, per Ray ingress and
layout: how many requests fail and how long until two replicas run again. The `ray` suite
asserts 0 failures for the split layout (its ingress retries in Ray); this also measures the
whole layout, whose replicas are the ingress (HAProxy replays their requests; Serve's Python
proxy does not). Reuses the suite's helpers.

    .venv/bin/python benchmarks/ray/replica_loss.py   # the table of haproxy/replica-loss.md
"""

from __future__ import annotations

import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

from tests.deploy.ray._cluster import (
    APP,
    ECHO_DEPLOYMENT,
    Cluster,
    echo_settings,
    kill_a_replica,
    local_cluster,
    wait_for,
)
from tests.deploy.ray._load import Load


def one(cluster: Cluster, ingress: str, layout: str) -> str:
    from ray import serve

    deployment = "server" if layout == "whole" else ECHO_DEPLOYMENT
    settings = echo_settings(min_replicas=2, max_replicas=2, echo_delay=0.02, ray_layout=layout)
    cluster.deploy(settings)
    with Load(cluster.url, clients=8, max_seconds=180) as load:
        wait_for("the load", lambda: load.ok >= 100, 60)
        killed, recovered, _ = kill_a_replica(cluster, deployment)
        at = load.ok
        wait_for("traffic after recovery", lambda: load.ok >= at + 100, 60)
    serve.delete(APP)
    kinds = sorted({e.split(" ", 1)[0] for e in load.errors})
    return (
        f"| {ingress} | {layout} | {load.sent} | {len(load.errors)} | {', '.join(kinds) or '-'} "
        f"| {recovered - killed:.1f} s |"
    )


def main() -> None:
    from dragoman.deploy.ray.settings import RaySettings

    if len(sys.argv) > 1:  # one ingress, in a fresh process: Serve reads its settings at import
        ingress = sys.argv[1]
        env = RaySettings(fast_path=True, ray_ingress=ingress).cluster_env()
        with local_cluster(env) as cluster:
            for layout in ("split", "whole"):
                print(one(cluster, ingress, layout), flush=True)
        return
    print("| ingress | layout | requests | failed | failures | 2 replicas running again after |")
    print("|---|---|---|---|---|---|")
    for ingress in ("haproxy", "proxy"):
        run = subprocess.run(
            [sys.executable, __file__, ingress], capture_output=True, text=True, check=True
        )
        print("\n".join(line for line in run.stdout.splitlines() if line.startswith("|")))
    print("\nEcho engine, 20 ms a text, 8 closed-loop clients; SIGKILL of one of two replicas.")


if __name__ == "__main__":
    main()
