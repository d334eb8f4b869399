from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from dragoman.engine.host_defaults import Choice, choose_engine, plan_engine
from dragoman.errors import ConfigError
from dragoman.host import Host
from dragoman.settings import EngineSettings


def host(
    isa: tuple[str, ...] = ("avx", "avx2"),
    cpus: int = 2,
    free_gib: float = 20.0,
    tcmalloc: str | None = "/usr/lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4",
) -> Host:
    return Host(
        "test CPU", "x86_64", isa, cpus, cpus, tuple(range(cpus)), 24.0, free_gib, None, tcmalloc
    )


def model_dir(tmp_path: Path) -> str:
    config = {
        "num_hidden_layers": 24,
        "num_attention_heads": 14,
        "num_key_value_heads": 2,
        "hidden_size": 896,
    }
    (tmp_path / "config.json").write_text(json.dumps(config))
    return str(tmp_path)


def test_avx2_host_gets_float32_on_every_core() -> None:
    plan = plan_engine(EngineSettings(), host(), gpu=False)
    assert plan.dtype.value == "float32"
    assert "no native bf16" in plan.dtype.reason
    assert plan.threads.value == "0-1"
    assert plan.enforce_eager.value == "true"


def test_native_bf16_host_gets_bfloat16() -> None:
    plan = plan_engine(EngineSettings(), host(("avx2", "avx512f", "avx512_bf16")), gpu=False)
    assert plan.dtype.value == "bfloat16"


def test_gpu_gets_bfloat16_and_graphs_and_no_cpu_environment() -> None:
    plan = plan_engine(EngineSettings(), host(), gpu=True)
    assert (plan.dtype.value, plan.enforce_eager.value) == ("bfloat16", "false")
    assert plan.env() == {}


def test_many_cores_keep_vllms_reserved_core() -> None:
    assert plan_engine(EngineSettings(), host(cpus=16), gpu=False).threads.value == "auto"


def test_explicit_settings_win_and_say_so() -> None:
    s = EngineSettings(dtype="bfloat16", cpu_threads="reserve-one", tcmalloc=False)
    plan = plan_engine(s, host(), gpu=False)
    assert plan.dtype.value == "bfloat16" and plan.dtype.reason == "set explicitly"
    assert plan.threads.value == "auto"
    assert plan.tcmalloc.value == ""
    assert "LD_PRELOAD" not in plan.env()
    assert (
        plan_engine(EngineSettings(cpu_threads="all"), host(cpus=3), gpu=False).threads.value
        == "0-2"
    )


def test_kv_cache_is_sized_from_the_model_and_capped_by_free_memory(tmp_path: Path) -> None:
    path = model_dir(tmp_path)
    # 2 x 24 layers x 2 heads x 64 dims x 4 bytes = 24 KiB a token; 16 x 2048 x 2 -> 1.5 GiB
    plan = plan_engine(EngineSettings(), host(), gpu=False, model_path=path)
    assert plan.kvcache_gib.value == "2"
    big = EngineSettings(max_num_seqs=256)  # 24 GiB wanted
    assert plan_engine(big, host(free_gib=20), gpu=False, model_path=path).kvcache_gib.value == "5"
    assert (
        plan_engine(EngineSettings(cpu_kvcache_space_gib=3), host(), gpu=False).kvcache_gib.value
        == "3"
    )


def test_env_preloads_tcmalloc_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LD_PRELOAD", "/lib/other.so")
    for name in ("VLLM_CPU_KVCACHE_SPACE", "VLLM_CPU_OMP_THREADS_BIND"):
        monkeypatch.setenv(name, "")  # restored after the test; apply() below changes them
    plan = plan_engine(EngineSettings(), host(), gpu=False)
    env = plan.env()
    assert env["LD_PRELOAD"] == f"{plan.tcmalloc.value}:/lib/other.so"
    assert env["VLLM_CPU_OMP_THREADS_BIND"] == "0-1"
    monkeypatch.setenv("LD_PRELOAD", env["LD_PRELOAD"])
    assert plan.env()["LD_PRELOAD"] == env["LD_PRELOAD"]
    plan.apply()
    assert os.environ["VLLM_CPU_KVCACHE_SPACE"] == plan.kvcache_gib.value


def test_no_tcmalloc_installed_says_how_to_get_it() -> None:
    plan = plan_engine(EngineSettings(), host(tcmalloc=None), gpu=False)
    assert plan.tcmalloc.value == ""
    assert "libtcmalloc-minimal4" in plan.tcmalloc.reason


def test_bad_cpu_threads_is_refused() -> None:
    with pytest.raises(ValueError, match="cpu_threads"):
        EngineSettings(cpu_threads="both")


def test_cpu_with_vnni_keeps_full_weights_and_w8a8_is_opt_in() -> None:
    for isa in (("avx2", "avx512f", "avx512_vnni", "avx512_bf16"), ("avx2", "amx_int8")):
        plan = plan_engine(EngineSettings(), host(isa), gpu=False)
        assert plan.weights.value == "full"
        assert "--weights w8a8 opts in" in plan.weights.reason
        chosen = plan_engine(EngineSettings(weights="w8a8"), host(isa), gpu=False)
        assert (chosen.weights.value, chosen.dtype.value) == ("w8a8", "float32")
        assert "quality gate" in chosen.dtype.reason
    explicit = plan_engine(EngineSettings(weights="w8a8", dtype="bfloat16"), host(isa), gpu=False)
    assert (explicit.weights.value, explicit.dtype.value) == ("w8a8", "bfloat16")


def test_w8a8_on_a_cpu_with_amx_tiles_runs_bf16_activations() -> None:
    # vLLM's AMX int8 kernel refuses float32 input at the first batch (seen on a Xeon with
    # amx_tile), so the plan picks bf16 there and refuses an explicit float32 before start.
    amx = Host(
        "test CPU",
        "x86_64",
        ("avx2", "avx512_vnni", "amx_int8"),
        2,
        2,
        (0, 1),
        24.0,
        20.0,
        None,
        None,
        amx_tiles=True,
    )
    plan = plan_engine(EngineSettings(weights="w8a8"), amx, gpu=False)
    assert (plan.weights.value, plan.dtype.value) == ("w8a8", "bfloat16")
    assert "AMX" in plan.dtype.reason
    half = plan_engine(EngineSettings(weights="w8a8", dtype="float16"), amx, gpu=False)
    assert half.dtype.value == "float16"
    with pytest.raises(ConfigError, match=r"w8a8 on this CPU \(AMX\) runs with bfloat16"):
        plan_engine(EngineSettings(weights="w8a8", dtype="float32"), amx, gpu=False)
    # the full weights keep float32 where asked, and the host's plan is unchanged
    full = plan_engine(EngineSettings(dtype="float32"), amx, gpu=False)
    assert (full.weights.value, full.dtype.value) == ("full", "float32")
    # The host's own plan there: w8a8 but for the layers the catalogue keeps in full.
    mixed = plan_engine(EngineSettings(), amx, gpu=False)
    assert (mixed.weights.value, mixed.dtype.value) == ("w8a8-mixed", "bfloat16")
    assert "down projection" in mixed.weights.reason
    # A model the catalogue measured no such layers for keeps its full weights.
    gemma = plan_engine(EngineSettings(model="gemma-3-270m"), amx, gpu=False)
    assert gemma.weights.value == "full"


def test_cpu_without_vnni_keeps_full_weights() -> None:
    for isa in (("avx", "avx2"), ("avx2", "avx512f", "avx512bw")):
        plan = plan_engine(EngineSettings(), host(isa), gpu=False)
        assert plan.weights.value == "full"
        assert "without int8 dot products" in plan.weights.reason


def test_gpu_and_models_outside_the_catalogue_keep_full_weights(tmp_path: Path) -> None:
    assert plan_engine(EngineSettings(), host(), gpu=True).weights.value == "full"
    local = EngineSettings(model=model_dir(tmp_path))
    plan = plan_engine(local, host(), gpu=False)
    assert (plan.weights.value, plan.weights.reason) == (
        "full",
        "not a catalogue model: no GGUF to re-quantize from",
    )


def test_explicit_weights_win() -> None:
    plan = plan_engine(EngineSettings(weights="full"), host(), gpu=False)
    assert (plan.weights.value, plan.weights.reason) == ("full", "set explicitly")
    assert "weights full" in plan.summary()


def test_w4a16_on_a_cpu_gets_bf16_activations_and_refuses_float32() -> None:
    plan = plan_engine(EngineSettings(weights="w4a16"), host(), gpu=False)
    assert plan.dtype.value == "bfloat16"
    assert "bf16 activations only" in plan.dtype.reason
    with pytest.raises(ValueError, match="w4a16 runs with bfloat16"):
        EngineSettings(weights="w4a16", dtype="float32")


def test_engine_choice_follows_the_host() -> None:
    avx2 = host()
    bf16 = host(("avx", "avx2", "avx512f", "avx512_bf16"))
    ok = {"gguf": True, "one_model": True, "llamacpp": True}
    assert choose_engine("host", avx2, False, **ok).value == "llama-cpp"
    assert choose_engine("host", bf16, False, **ok).value == "continuous"
    assert choose_engine("host", avx2, True, **ok).value == "continuous"  # GPU
    assert choose_engine("continuous", avx2, False, **ok) == Choice("continuous", "set explicitly")
    assert choose_engine("llama-cpp", bf16, False, **ok).value == "llama-cpp"
    for missing in ("gguf", "one_model", "llamacpp"):
        choice = choose_engine("host", avx2, False, **{**ok, missing: False})
        assert choice.value == "continuous", missing
