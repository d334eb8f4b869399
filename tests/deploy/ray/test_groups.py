"""Model groups from the serve settings, and replica resources from the host."""

from __future__ import annotations

from dataclasses import replace

from dragoman.deploy.ray.groups import model_groups, replica_resources
from dragoman.host import Host
from dragoman.settings import ModelSpec, ServeSettings

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


def test_one_group_per_model_entry_with_its_pairs() -> None:
    settings = ServeSettings(
        models=[
            ModelSpec(name="qwen", model="qwen2.5-coder-0.5b-instruct", languages=["en", "de"]),
            ModelSpec(name="gemma", model="gemma-3-270m", pairs=["en-fr"]),
        ]
    )
    qwen, gemma = model_groups(settings)
    assert (qwen.key, qwen.pairs, qwen.prompt) == ("qwen", (("de", "en"), ("en", "de")), "chat")
    assert (gemma.key, gemma.pairs, gemma.prompt) == ("gemma", (("en", "fr"),), "few-shot")
    assert gemma.deployment == "model-gemma"


def test_a_single_model_serves_every_pair_of_its_languages() -> None:
    (group,) = model_groups(ServeSettings(languages=["en", "fr", "de"]))
    assert group.key == "qwen2.5-coder-0.5b-instruct"
    assert len(group.pairs) == 6


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
