"""SIGKILL of one of two echo replicas under 8 closed-loop clients, per Ray ingress and
layout, repeated (a fresh deploy each time, as the `ray` suite's test does): how many requests
fail and how long until two replicas run again. Each kill comes once HAProxy routes to both
replicas (tests/deploy/ray/_cluster.py, Cluster.routed). Reuses the suite's helpers.

    .venv/bin/python benchmarks/ray/replica_loss.py [KILLS]   # the table of replica-loss.md
"""

from __future__ import annotations

import os
import statistics
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


def one(cluster: Cluster, layout: str) -> tuple[int, list[str], float]:
    """Requests sent, failures, seconds until two replicas ran again."""
    from ray import serve

    from dragoman.deploy.ray.app import SERVER

    deployment = SERVER if layout == "whole" else ECHO_DEPLOYMENT
    settings = echo_settings(min_replicas=2, max_replicas=2, echo_delay=0.02, ray_layout=layout)
    cluster.deploy(settings)
    with Load(cluster.url, clients=8, max_seconds=180) as load:
        wait_for("the load", lambda: load.ok >= 100, 60)
        killed, recovered, _ = kill_a_replica(cluster, deployment)
        at = load.ok
        wait_for("traffic after recovery", lambda: load.ok >= at + 100, 60)
    serve.delete(APP)
    return load.sent, load.errors, recovered - killed


def row(ingress: str, layout: str, runs: list[tuple[int, list[str], float]]) -> str:
    errors = [e for _, errs, _ in runs for e in errs]
    kinds = sorted({e.split(" ", 1)[0] for e in errors})
    lost = sum(1 for _, errs, _ in runs if errs)
    recovery = statistics.median(r for _, _, r in runs)
    return (
        f"| {ingress} | {layout} | {len(runs)} | {lost} | {sum(s for s, _, _ in runs)} "
        f"| {len(errors)} | {', '.join(kinds) or '-'} | {recovery:.1f} s |"
    )


def main() -> None:
    from dragoman.deploy.ray.settings import RaySettings

    kills = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    if len(sys.argv) > 2:  # one ingress, in a fresh process: Serve reads its settings at import
        ingress = sys.argv[2]
        env = RaySettings(fast_path=True, ray_ingress=ingress).cluster_env()
        with local_cluster(env) as cluster:
            runs: dict[str, list[tuple[int, list[str], float]]] = {"split": [], "whole": []}
            for _ in range(kills):
                for layout in runs:
                    runs[layout].append(one(cluster, layout))
            for layout, done in runs.items():
                print(row(ingress, layout, done), flush=True)
        return
    print(
        "| ingress | layout | kills | kills that failed a request | requests | failed "
        "| failures | 2 replicas running again after (median) |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for ingress in ("haproxy", "proxy"):
        run = subprocess.run(
            [sys.executable, __file__, str(kills), ingress],
            capture_output=True,
            text=True,
            check=True,
        )
        print("\n".join(line for line in run.stdout.splitlines() if line.startswith("|")))
    print(
        f"\nEcho engine, 20 ms a text, 8 closed-loop clients; {kills} times per ingress and "
        "layout: deploy, SIGKILL of one of two replicas once the ingress routes to both, "
        "wait for the replacement and 100 more answers, delete."
    )


if __name__ == "__main__":
    main()
