"""Losing a replica under load: SIGKILL one of two echo replicas while clients keep sending,
and Serve starts a replacement. Split layout: in-flight texts on it fail in Ray
(ActorDiedError) and the ingress retries them on the other replica. Whole layout: the replica
is the ingress, HAProxy's connection to it dies unanswered and HAProxy sends the buffered
request again to the other (deploy/ray/haproxy.py). Either way no client sees an error.

The kill comes once HAProxy routes to both replicas (kill_a_replica waits for it): Serve tells
HAProxy of a new replica seconds after it runs, and a kill before then (the first version of
this test, right after the deploy) took the only replica HAProxy knew, and with it a request
(1 in 768; 2 of 7 such kills here)."""

from __future__ import annotations

import time

import pytest

from dragoman.deploy.ray.app import SERVER
from tests.deploy.ray._cluster import (
    ECHO_DEPLOYMENT,
    Cluster,
    echo_settings,
    kill_a_replica,
    wait_for,
)
from tests.deploy.ray._load import Load

pytestmark = pytest.mark.ray


@pytest.mark.parametrize("layout", ["split", "whole"])
def test_sigkill_of_a_replica_under_load_fails_no_request(deployed: Cluster, layout: str) -> None:
    deployment = SERVER if layout == "whole" else ECHO_DEPLOYMENT
    settings = echo_settings(min_replicas=2, max_replicas=2, echo_delay=0.02, ray_layout=layout)
    deployed.deploy(settings)
    assert [r.state for r in deployed.replicas(deployment)] == ["RUNNING", "RUNNING"]

    with Load(deployed.url, clients=8, max_seconds=180) as load:
        wait_for("the load to be under way", lambda: load.ok >= 100, 60)
        killed, recovered, new = kill_a_replica(deployed, deployment)
        assert deployed.running(deployment) == 2
        at_recovery = load.ok
        wait_for("traffic after the recovery", lambda: load.ok >= at_recovery + 100, 60)

    recovery = recovered - killed
    # The replacement's own start: from the controller creating it to now, on its clock.
    start = time.time() - new.start_time_s - (time.monotonic() - recovered)
    print(
        f"SIGKILL -> 2 replicas running again in {recovery:.2f} s (the replacement's start "
        f"{start:.2f} s); {load.sent} requests, {len(load.errors)} failed"
    )
    assert load.errors == [], load.errors[:5]
    # Recovery = noticing the death + one replica start. Serve notices by its health check
    # (every health_check_period_s), so that bounds the part beyond the start itself.
    assert recovery <= 2 * start + settings.health_check_period_s, (recovery, start)
