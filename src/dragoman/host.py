"""What this machine is: CPU model, ISA flags, cores, memory, accelerator, allocator.

Detected once, here, and nowhere else (STYLE rule 12): the engine's host defaults
(`engine/host_defaults.py`), `dragoman info`, the benchmarks' labels and model preparation all read
this. CPUs differ between otherwise identical machines (AVX-512 with native bf16 on some, AVX2
only on others), and the right engine settings differ with them.
"""

from __future__ import annotations

import functools
import glob
import os
import platform
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

# The flags that decide engine settings; the rest of /proc/cpuinfo's list is not reported.
ISA_FLAGS = (
    "avx",
    "avx2",
    "fma",
    "f16c",
    "avx512f",
    "avx512bw",
    "avx512vl",
    "avx512_vnni",
    "avx512_bf16",
    "avx512_fp16",
    "amx_bf16",
    "amx_int8",
    "amx_tile",
)

# oneDNN's ISA cap (ONEDNN_MAX_CPU_ISA) -> the flags it hides from the engine's matrix maths.
# An operator (or a test imitating a slower host) who caps the ISA gets settings for the cap.
_NO_AVX512 = ("avx512", "amx")
_ISA_CAPS: dict[str, tuple[str, ...]] = {
    "SSE41": (*_NO_AVX512, "avx", "fma", "f16c"),
    "AVX": (*_NO_AVX512, "avx2", "fma"),
    "AVX2": _NO_AVX512,
    "AVX2_VNNI": _NO_AVX512,
    "AVX2_VNNI_2": _NO_AVX512,
    "AVX512_CORE": ("avx512_vnni", "avx512_bf16", "avx512_fp16", "amx"),
    "AVX512_CORE_VNNI": ("avx512_bf16", "avx512_fp16", "amx"),
    "AVX512_CORE_BF16": ("avx512_fp16", "amx"),
    "AVX512_CORE_FP16": ("amx",),
}

# Where Debian's libtcmalloc-minimal4 (and other distributions' builds) put the allocator.
_TCMALLOC_GLOBS = (
    "/usr/lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4",
    "/usr/lib/aarch64-linux-gnu/libtcmalloc_minimal.so.4",
    "/usr/lib*/libtcmalloc_minimal.so.4",
    "/usr/lib/*/libtcmalloc.so.4",
)


@dataclass(frozen=True)
class Host:
    cpu_model: str
    arch: str
    isa: tuple[str, ...]
    """The decisive ISA flags this CPU has and the engine may use (a subset of ISA_FLAGS,
    less what ONEDNN_MAX_CPU_ISA caps)."""
    physical_cores: int
    logical_cores: int
    usable_cpus: tuple[int, ...]
    """CPU ids this process may run on (its affinity mask), in order."""
    memory_total_gib: float
    memory_available_gib: float
    gpu: str | None
    """Name of the first NVIDIA GPU, or None."""
    tcmalloc: str | None
    """Path of a tcmalloc library to preload, or None when none is installed."""
    isa_cap: str | None = None
    """ONEDNN_MAX_CPU_ISA when set: the engine's matrix maths use no more than this."""
    amx_tiles: bool = False
    """The CPU has AMX tiles, whatever ONEDNN_MAX_CPU_ISA caps: vLLM picks its AMX int8 kernel
    for w8a8 by asking the CPU itself (`torch.cpu._is_amx_tile_supported`), not oneDNN."""

    @property
    def native_bf16(self) -> bool:
        """bf16 matrix maths in hardware (AVX-512 BF16 or AMX); without it PyTorch emulates
        bf16 and a batch barely outruns one stream."""
        return "avx512_bf16" in self.isa or "amx_bf16" in self.isa

    @property
    def int8_dot(self) -> bool:
        """int8 dot products in hardware (AVX-512 VNNI or AMX); oneDNN's int8 matrix maths
        depend on them (without, vLLM's W8A8 path is slower than float32)."""
        return "avx512_vnni" in self.isa or "amx_int8" in self.isa

    @property
    def cpu_class(self) -> str:
        """A short label for reports: the widest vector ISA and whether bf16 is native."""
        if "amx_bf16" in self.isa:
            return "amx-bf16"
        if "avx512_bf16" in self.isa:
            return "avx512-bf16"
        if "avx512f" in self.isa:
            return "avx512"
        if "avx2" in self.isa:
            return "avx2"
        return self.arch

    def label(self) -> str:
        gpu = f", GPU {self.gpu}" if self.gpu else ""
        cap = f", ISA capped at {self.isa_cap}" if self.isa_cap else ""
        return (
            f"{self.cpu_model} ({self.cpu_class}{cap}), {self.physical_cores} cores / "
            f"{self.logical_cores} threads, {self.memory_total_gib:.0f} GiB{gpu}"
        )

    def as_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out.update(native_bf16=self.native_bf16, int8_dot=self.int8_dot, cpu_class=self.cpu_class)
        return out


def parse_cpuinfo(text: str) -> tuple[str, set[str], int]:
    """(model name, flags, physical cores) from /proc/cpuinfo text."""
    model, flags = "", set[str]()
    cores: set[tuple[str, str]] = set()
    physical_id = core_id = ""
    for line in text.splitlines():
        key, _, value = line.partition(":")
        key, value = key.strip(), value.strip()
        if key == "model name" and not model:
            model = value
        elif key == "flags" and not flags:
            flags = set(value.split())
        elif key == "physical id":
            physical_id = value
        elif key == "core id":
            core_id = value
        elif not line.strip() and (physical_id or core_id):
            cores.add((physical_id, core_id))
            physical_id = core_id = ""
    if physical_id or core_id:
        cores.add((physical_id, core_id))
    return model, flags, len(cores)


def apply_isa_cap(flags: set[str], cap: str | None) -> set[str]:
    """The flags left usable under oneDNN's ISA cap (unknown or no cap: all of them)."""
    hidden = _ISA_CAPS.get((cap or "").upper(), ())
    return {f for f in flags if not f.startswith(hidden)} if hidden else flags


def _gpu_name() -> str | None:
    if not glob.glob("/dev/nvidia[0-9]*"):
        return None
    try:
        import pynvml

        pynvml.nvmlInit()
        try:
            name = pynvml.nvmlDeviceGetName(pynvml.nvmlDeviceGetHandleByIndex(0))
        finally:
            pynvml.nvmlShutdown()
        return name.decode() if isinstance(name, bytes) else str(name)
    except Exception:
        return "NVIDIA GPU"


def find_tcmalloc() -> str | None:
    for pattern in _TCMALLOC_GLOBS:
        found = sorted(glob.glob(pattern))
        if found:
            return found[0]
    return None


@functools.cache
def detect() -> Host:
    """This machine, read once per process."""
    import psutil

    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        text = ""
    model, flags, physical = parse_cpuinfo(text)
    cap = os.environ.get("ONEDNN_MAX_CPU_ISA") or None
    amx_tiles = "amx_tile" in flags
    flags = apply_isa_cap(flags, cap)
    logical = psutil.cpu_count(logical=True) or os.cpu_count() or 1
    usable = tuple(sorted(os.sched_getaffinity(0))) if hasattr(os, "sched_getaffinity") else ()
    mem = psutil.virtual_memory()
    return Host(
        cpu_model=model or platform.processor() or "unknown CPU",
        arch=platform.machine(),
        isa=tuple(f for f in ISA_FLAGS if f in flags),
        physical_cores=physical or psutil.cpu_count(logical=False) or logical,
        logical_cores=logical,
        usable_cpus=usable or tuple(range(logical)),
        memory_total_gib=mem.total / 2**30,
        memory_available_gib=mem.available / 2**30,
        gpu=_gpu_name(),
        tcmalloc=find_tcmalloc(),
        isa_cap=cap,
        amx_tiles=amx_tiles,
    )
