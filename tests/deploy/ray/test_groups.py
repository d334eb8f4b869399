"""Model groups as Serve deployments, and replica resources from the host."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from dragoman.deploy.ray.groups import model_groups, replica_resources
from dragoman.engine import vllm_engine
from dragoman.host import Host
from dragoman.models.catalogue import CATALOGUE
from dragoman.models.prepare import READY_MARKER
from dragoman.service.settings import ModelSpec, ServeSettings

HOST = Host(
    cpu_model="test CPU",
    arch="x86_64",
    isa=("avx2",),
    physical_cores=8,
    logical_cores=8,
    usable_cpus=tuple(range(8)),
    memory_total_gib=32.0,
    memory_available_gib=30.0,
    gpu=None,
    tcmalloc=None,
)


def test_each_group_is_a_deployment_named_after_its_model() -> None:
    (gemma,) = model_groups(
        ServeSettings(models=[ModelSpec(name="gemma", model="gemma-3-270m", pairs=["en-fr"])])
    )
    assert gemma.deployment == "model-gemma"
    (echo,) = model_groups(ServeSettings(architecture="echo"))
    assert echo.deployment == "model-echo-qwen2.5-coder-0.5b-instruct"


def test_root_is_the_form_of_weights_the_engine_loads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(vllm_engine, "is_cpu_platform", lambda: True)  # no vLLM to import
    for form in ("gemma-3-270m", "gemma-3-270m.w8a8"):
        prepared = tmp_path / "models" / form
        prepared.mkdir(parents=True)
        (prepared / "config.json").write_text("{}")
        (prepared / READY_MARKER).write_text(CATALOGUE["gemma-3-270m"].sha256)
    gemma = ModelSpec(name="gemma", model="gemma-3-270m", pairs=["en-fr"])
    w8a8 = ServeSettings(data_dir=tmp_path, models=[gemma], weights="w8a8")
    (group,) = model_groups(w8a8)
    assert group.root(w8a8) == str(tmp_path / "models" / "gemma-3-270m.w8a8")
    full = w8a8.model_copy(update={"weights": "full"})
    assert group.root(full) == str(tmp_path / "models" / "gemma-3-270m")
    # Not prepared on this node: the ingress still starts, naming the model.
    w4a16 = w8a8.model_copy(update={"weights": "w4a16"})
    assert group.root(w4a16) == "gemma-3-270m"


def test_replica_cpus_follow_the_engine_threads_on_this_host() -> None:
    settings = ServeSettings()
    # 8 CPUs: vLLM's default keeps one for the front end, so the engine binds 7.
    assert replica_resources(settings, HOST).cpus == 7
    small = replace(HOST, usable_cpus=(0, 1), logical_cores=2, physical_cores=2)
    assert replica_resources(settings, small).cpus == 2  # every core, as measured on 2
    pinned = ServeSettings(cpu_threads="0-3")
    assert replica_resources(pinned, HOST).cpus == 4
    assert replica_resources(settings, HOST, cpus=1.5).cpus == 1.5


def test_a_gpu_replica_takes_its_memory_share_of_a_card() -> None:
    gpu = replace(HOST, gpu="NVIDIA L4")
    res = replica_resources(ServeSettings(gpu_memory_utilization=0.3), gpu)
    assert (res.cpus, res.gpus) == (1.0, 0.3)
    assert replica_resources(ServeSettings(), HOST).gpus == 0.0
