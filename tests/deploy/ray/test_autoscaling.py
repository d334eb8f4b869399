"""Autoscaling on ongoing requests: 1 echo replica, load above its target -> 2, load gone ->
back to 1, with short delays and look-back (and metrics pushed every 0.2 s: conftest)."""

from __future__ import annotations

import time

import pytest

from tests.deploy.ray._cluster import ECHO_DEPLOYMENT, Cluster, echo_settings, wait_for
from tests.deploy.ray._load import Load

pytestmark = pytest.mark.ray


# Ray 2.60 still compares look_back_period_s with the deprecated metrics_interval_s (10 s)
# although the push interval now comes from the environment (0.2 s here: conftest).
@pytest.mark.filterwarnings("ignore:`look_back_period_s`:FutureWarning")
def test_replicas_follow_the_load_up_and_down(deployed: Cluster) -> None:
    settings = echo_settings(
        min_replicas=1,
        max_replicas=2,
        echo_delay=0.2,
        max_ongoing_requests=4,
        target_fraction=0.5,  # 2 ongoing per replica
        upscale_delay_s=0.5,
        downscale_delay_s=2.0,
        look_back_period_s=1.0,
    )
    deployed.deploy(settings)
    assert deployed.running(ECHO_DEPLOYMENT) == 1

    started = time.monotonic()
    with Load(deployed.url, clients=8, max_seconds=120) as load:
        # 8 texts in flight against a target of 2 per replica: Serve wants 4, capped at 2.
        wait_for("a second replica", lambda: deployed.running(ECHO_DEPLOYMENT) == 2, 90)
        up = time.monotonic() - started
    stopped = time.monotonic()
    wait_for("back to one replica", lambda: deployed.running(ECHO_DEPLOYMENT) == 1, 90)
    down = time.monotonic() - stopped
    print(f"1 -> 2 replicas in {up:.1f} s under load; 2 -> 1 in {down:.1f} s after it")
    assert load.ok > 0
    assert load.errors == [], load.errors[:5]
