"""`dragoman deploy ray`'s local cluster size (no cluster started)."""

from __future__ import annotations

import pytest

from dragoman.deploy.ray import run
from dragoman.deploy.ray.settings import RaySettings


def test_a_local_cluster_fits_the_ingress_and_every_min_replica(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(run.os, "cpu_count", lambda: 2)
    # One real replica asks for 2 CPUs, the ingress for 1: a 2-CPU cluster would never place it.
    real = RaySettings(languages=["en", "fr"], replica_cpus=2, ray_layout="split")
    assert run.local_cpus(real) == 3
    assert run.local_cpus(real.model_copy(update={"min_replicas": 3, "max_replicas": 3})) == 7
    echo = RaySettings(architecture="echo", languages=["en", "fr"], ray_layout="split")
    assert run.local_cpus(echo) == 2  # 1.5 needed: the machine's count
    assert run.local_cpus(echo.model_copy(update={"ray_num_cpus": 16})) == 16


def test_a_whole_layout_cluster_fits_its_min_replicas(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(run.os, "cpu_count", lambda: 2)
    whole = RaySettings(languages=["en", "fr"], replica_cpus=2, ray_layout="whole")
    assert run.local_cpus(whole) == 2  # no ingress of its own
    assert run.local_cpus(whole.model_copy(update={"min_replicas": 3, "max_replicas": 3})) == 6
