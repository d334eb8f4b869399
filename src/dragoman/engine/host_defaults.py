"""The host's engine defaults: engine settings chosen for the host they run on, each with the
reason it was chosen.

Every field of `EngineSettings` that depends on the machine defaults to "host" (or None) and is
resolved here from `dragoman.host`; an explicit setting always wins and is reported as such.
The plan is applied to the environment before an engine process starts (vLLM's CPU backend
reads its thread binding, KV-cache size and preloaded allocator from there), and reported by
the start-up log line, `dragoman info`, `/v1/info` and the `dragoman_engine_info` metric.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dragoman.errors import ConfigError
from dragoman.host import Host

if TYPE_CHECKING:
    from dragoman.settings import EngineSettings, ModelSettings

# Measured on 2-core hosts (benchmarks/results/tune-*): the engine on every core beat vLLM's
# default of leaving one to the front end, with the API server sharing the machine. Beyond this
# many CPUs one core for the front end costs little, so vLLM's default is kept there.
ALL_CORES_UP_TO = 4

_DTYPE_BYTES = {"float32": 4, "bfloat16": 2, "float16": 2}


@dataclass(frozen=True)
class Choice:
    value: str
    reason: str


@dataclass(frozen=True)
class EnginePlan:
    device: str
    dtype: Choice
    threads: Choice
    """VLLM_CPU_OMP_THREADS_BIND: a CPU list ("0-1"), "auto" (vLLM reserves one core), or
    "nobind"."""
    kvcache_gib: Choice
    tcmalloc: Choice
    """Path of the allocator to preload, or "" for none."""
    enforce_eager: Choice
    weights: Choice = Choice("full", "default")
    """Which form of the model's weights is loaded: full, w8a8 or w4a16 (models/quantize.py)."""
    engine: Choice = Choice("vllm", "--architecture continuous")
    """Which engine runs the model: vllm, or llama.cpp (`--architecture llama-cpp`)."""

    @property
    def form(self) -> str:
        """What its replies depend on besides the model and prompt: the engine, the weights
        form and the dtype, as values (`host` resolved and the same set explicitly agree)."""
        return f"{self.engine.value}/{self.weights.value}/{self.dtype.value}"

    def env(self) -> dict[str, str]:
        """Environment an engine process of this plan must start with."""
        if self.device != "cpu":
            return {}
        env = {
            "VLLM_CPU_OMP_THREADS_BIND": self.threads.value,
            "VLLM_CPU_KVCACHE_SPACE": self.kvcache_gib.value,
        }
        if self.tcmalloc.value:
            preload = os.environ.get("LD_PRELOAD", "")
            if self.tcmalloc.value not in preload:
                preload = ":".join(p for p in (self.tcmalloc.value, preload) if p)
            env["LD_PRELOAD"] = preload
        return env

    def apply(self) -> None:
        """Set this plan's environment in this process, inherited by engine processes it
        spawns from now on (vLLM reads it in the engine process, at start)."""
        os.environ.update(self.env())

    def as_dict(self) -> dict[str, dict[str, str]]:
        return {
            name: {"value": c.value, "reason": c.reason}
            for name, c in (
                ("engine", self.engine),
                ("dtype", self.dtype),
                ("threads", self.threads),
                ("kv_cache_gib", self.kvcache_gib),
                ("tcmalloc", self.tcmalloc),
                ("enforce_eager", self.enforce_eager),
                ("weights", self.weights),
            )
        }

    def summary(self) -> str:
        tc = "tcmalloc" if self.tcmalloc.value else "no tcmalloc"
        if self.engine.value != "vllm":
            return (
                f"engine {self.engine.value}, weights {self.weights.value}, "
                f"threads {self.threads.value}, KV cache {self.kvcache_gib.value} GiB"
            )
        if self.device != "cpu":
            return f"device gpu, dtype {self.dtype.value}, eager {self.enforce_eager.value}"
        return (
            f"device cpu, weights {self.weights.value}, dtype {self.dtype.value}, "
            f"threads {self.threads.value}, "
            f"KV cache {self.kvcache_gib.value} GiB, {tc}, eager {self.enforce_eager.value}"
        )


def _cpu_list(cpus: tuple[int, ...]) -> str:
    """[0, 1, 2, 5] -> "0-2,5" (vLLM's CPU-list syntax)."""
    parts: list[str] = []
    start = prev = None
    for c in cpus:
        if prev is not None and c == prev + 1:
            prev = c
            continue
        if start is not None:
            parts.append(str(start) if start == prev else f"{start}-{prev}")
        start = prev = c
    if start is not None:
        parts.append(str(start) if start == prev else f"{start}-{prev}")
    return ",".join(parts)


def choose_dtype(setting: str, host: Host, gpu: bool, weights: str = "full") -> Choice:
    if weights == "w4a16" and setting == "host" and not gpu:
        return Choice("bfloat16", "w4a16: the CPU 4-bit kernel takes bf16 activations only")
    if weights.startswith("w8a8") and not gpu and host.amx_tiles:
        # vLLM 0.32 runs int8 layers through its AMX kernel wherever the CPU has AMX tiles
        # (scaled_mm/cpu.py, check_cpu_sgl_kernel), and that kernel refuses float32 input at
        # the first batch ("int8_scaled_mm_with_quant: expect A to be bfloat16 or half").
        if setting == "float32":
            raise ConfigError(
                "weights w8a8 on this CPU (AMX) runs with bfloat16 or float16 activations: "
                "vLLM's AMX int8 kernel has no float32 path (drop --dtype float32, or use "
                "--weights full)"
            )
        if setting == "host":
            return Choice(
                "bfloat16",
                "w8a8 on a CPU with AMX: vLLM's AMX int8 kernel takes bf16 activations only",
            )
    if weights.startswith("w8a8") and setting == "host" and not gpu:
        return Choice(
            "float32",
            "w8a8: the matrix maths are int8 either way; float32 activations are the pair that "
            "passed the quality gate, and decode as fast as bf16 (28.1 vs 26.8 tok/s, 1 stream)",
        )
    if setting != "host":
        return Choice(setting, "set explicitly")
    if gpu:
        return Choice("bfloat16", "GPU: bf16 is native and halves memory traffic")
    if host.native_bf16:
        return Choice("bfloat16", "CPU has native bf16 (avx512_bf16/amx_bf16)")
    return Choice(
        "float32",
        "CPU has no native bf16: emulated bf16 is ~8x slower at batch 16 than float32",
    )


# Where the plan picks w8a8-mixed (benchmarks/README.md, "w8a8-mixed on AMX").
MIXED_WHY = (
    "CPU with AMX: int8 weights, smoothed, but for the layers measured to lose quality that "
    "way (each block's down projection stays bf16): within 0.5 chrF of float32 on every eval "
    "pair, and it answers one client sooner than bf16"
)


def choose_weights(
    setting: str, host: Host, gpu: bool, catalogued: bool, mixed: bool = False, dtype: str = "host"
) -> Choice:
    """The form of the weights to load. Quantized forms are made from a catalogue model's GGUF,
    so a model from elsewhere gets its weights as they are; `mixed`: the catalogue names the
    layers its w8a8-mixed form keeps in full (measured for that model); `dtype`, the dtype
    setting (float32 asked for: the full weights, which AMX's int8 kernel would refuse)."""
    if setting != "host":
        return Choice(setting, "set explicitly")
    if gpu:
        return Choice("full", "GPU: full weights at the dtype above")
    if not catalogued:
        return Choice("full", "not a catalogue model: no GGUF to re-quantize from")
    if not host.int8_dot:
        return Choice(
            "full",
            "CPU without int8 dot products (VNNI): vLLM's int8 path ran ~4x slower than "
            "float32 on an imitated AVX2 host (benchmarks/results/quantized-*)",
        )
    if host.amx_tiles and mixed and dtype != "float32":
        return Choice("w8a8-mixed", MIXED_WHY)
    # Measured faster (1.7x bf16 at one stream, 1.4x at sixteen on the avx512-bf16 host; 1.6x
    # and 1.1x on an AMX host, benchmarks/results/quantized-*) and within 0.5 chrF of
    # float32 pooled over 720 eval texts, but in CI it once rendered "The museum has 24
    # paintings." as "Le Museum a 24 paintings." under 32 concurrent requests: opt-in for now.
    return Choice(
        "full",
        "CPU with int8 dot products (VNNI/AMX): w8a8 decoded one stream 1.6-1.7x faster than "
        "bf16 where measured but mistranslated a sentence under load in CI; --weights w8a8 "
        "opts in",
    )


def choose_engine(
    setting: str, host: Host, gpu: bool, *, gguf: bool, one_model: bool, llamacpp: bool
) -> Choice:
    """Which engine serves (`--architecture host`): vLLM's continuous batching, or llama.cpp
    running the catalogue model's GGUF (`llama-cpp`). Each wins where the
    benchmarks say: vLLM where the CPU has native bf16 (or on a GPU), llama.cpp on CPUs without
    it, where vLLM has only float32 (benchmarks/README.md, "Which engine on which host")."""
    if setting != "host":
        return Choice(setting, "set explicitly")
    if gpu:
        return Choice("continuous", "GPU: vLLM")
    if host.native_bf16:
        return Choice(
            "continuous",
            "CPU with native bf16: vLLM's batches in bf16 give 1.4x llama.cpp's output at 16 "
            "clients (llama.cpp answers one client sooner: --architecture llama-cpp)",
        )
    if not gguf:
        return Choice("continuous", "not a catalogue model: no GGUF for llama.cpp")
    if not one_model:
        return Choice("continuous", "[[models]]: llama.cpp serves one model a server")
    if not llamacpp:
        return Choice(
            "continuous",
            "CPU without native bf16, where llama.cpp wins, but no llama.cpp server is installed "
            "(the xllamacpp wheel of the `cpu` extra)",
        )
    return Choice(
        "llama-cpp",
        "CPU without native bf16: llama.cpp on the catalogue GGUF answers one client 2.4x sooner "
        "than vLLM's float32 in a quarter of the memory (vLLM float32 gives 1.2x the tokens at "
        "16 clients: --architecture continuous; benchmarks/results/engine-choice-avx2-2core)",
    )


def choose_threads(setting: str, host: Host) -> Choice:
    if setting != "host":
        named = {"reserve-one": "auto", "all": _cpu_list(host.usable_cpus)}
        return Choice(named.get(setting, setting), "set explicitly")
    if len(host.usable_cpus) <= ALL_CORES_UP_TO:
        return Choice(
            _cpu_list(host.usable_cpus),
            f"{len(host.usable_cpus)} CPUs: the engine on every core beat leaving one to the "
            "front end (measured, benchmarks/results/tune-*)",
        )
    n = len(host.usable_cpus)
    return Choice("auto", f"{n} CPUs: vLLM's default, one kept for the front end")


def kv_bytes_per_token(model_path: str, dtype: str) -> int | None:
    """Bytes of KV cache one token takes, from the model's config.json (None if unknown)."""
    try:
        cfg: dict[str, Any] = json.loads((Path(model_path) / "config.json").read_text())
    except (OSError, ValueError):
        return None
    cfg = cfg.get("text_config", cfg)
    layers = cfg.get("num_hidden_layers")
    heads = cfg.get("num_attention_heads")
    kv_heads = cfg.get("num_key_value_heads") or heads
    head_dim = cfg.get("head_dim") or (cfg["hidden_size"] // heads if heads else None)
    if not (layers and kv_heads and head_dim):
        return None
    return int(2 * layers * kv_heads * head_dim * _DTYPE_BYTES.get(dtype, 4))


def choose_kvcache(
    setting: int | None, host: Host, s: EngineSettings, model_path: str | None, dtype: str
) -> Choice:
    if setting is not None:
        return Choice(str(setting), "set explicitly")
    # What full batches of full-length sequences need, with room to spare, within a quarter of
    # the memory free now (weights, activations and other models need the rest).
    per_token = kv_bytes_per_token(model_path, dtype) if model_path else None
    cap = max(1, int(host.memory_available_gib * 0.25))
    if per_token is None:
        gib = min(4, cap)
        why = f"model geometry unknown: {gib} GiB (a quarter of free memory, at most 4)"
        return Choice(str(gib), why)
    need = per_token * s.max_num_seqs * s.max_model_len * 2 / 2**30
    gib = max(1, min(cap, max(2, int(need + 0.999))))
    return Choice(
        str(gib),
        f"{s.max_num_seqs} x {s.max_model_len} tokens x {per_token // 1024} KiB, twice over, "
        f"= {need:.2f} GiB, at least 2; at most a quarter of the "
        f"{host.memory_available_gib:.0f} GiB free",
    )


def choose_tcmalloc(setting: bool | None, host: Host) -> Choice:
    if setting is False:
        return Choice("", "switched off explicitly")
    if host.tcmalloc:
        return Choice(host.tcmalloc, "found: vLLM's CPU backend allocates faster with it")
    why = "not installed (Debian: apt-get install libtcmalloc-minimal4)"
    return Choice("", why)


def plan_weights(s: ModelSettings, host: Host, gpu: bool) -> Choice:
    """choose_weights for `s.model`, with what the catalogue knows of it."""
    from dragoman.models.catalogue import CATALOGUE

    entry = CATALOGUE.get(s.model)
    mixed = entry is not None and bool(entry.w8a8_full)
    dtype = str(getattr(s, "dtype", "host"))  # an EngineSettings field
    return choose_weights(s.weights, host, gpu, entry is not None, mixed, dtype)


def plan_engine(
    s: EngineSettings, host: Host, gpu: bool, model_path: str | None = None
) -> EnginePlan:
    weights = plan_weights(s, host, gpu)
    dtype = choose_dtype(s.dtype, host, gpu, weights.value)
    if s.enforce_eager is not None:
        eager = Choice(str(s.enforce_eager).lower(), "set explicitly")
    elif gpu:
        eager = Choice("false", "GPU: CUDA graphs speed up decode")
    else:
        eager = Choice("true", "CPU: start-up ~40 s instead of ~90 s, same decode speed")
    return EnginePlan(
        device="gpu" if gpu else "cpu",
        dtype=dtype,
        threads=choose_threads(s.cpu_threads, host),
        kvcache_gib=choose_kvcache(s.cpu_kvcache_space_gib, host, s, model_path, dtype.value),
        tcmalloc=choose_tcmalloc(s.tcmalloc, host),
        enforce_eager=eager,
        weights=weights,
    )
