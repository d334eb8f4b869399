from __future__ import annotations

from dragoman.host import ISA_FLAGS, Host, apply_isa_cap, detect, parse_cpuinfo

AVX2_EPYC = """processor\t: 0
vendor_id\t: AuthenticAMD
model name\t: AMD EPYC 7B13
physical id\t: 0
core id\t: 0
flags\t\t: fpu sse sse2 avx fma f16c avx2 bmi2

processor\t: 1
vendor_id\t: AuthenticAMD
model name\t: AMD EPYC 7B13
physical id\t: 0
core id\t: 1
flags\t\t: fpu sse sse2 avx fma f16c avx2 bmi2
"""


def host(isa: tuple[str, ...], cpus: int = 2) -> Host:
    return Host("test CPU", "x86_64", isa, cpus, cpus, tuple(range(cpus)), 24.0, 20.0, None, None)


def test_parse_cpuinfo_reads_model_flags_and_physical_cores() -> None:
    model, flags, cores = parse_cpuinfo(AVX2_EPYC)
    assert model == "AMD EPYC 7B13"
    assert {"avx2", "fma"} <= flags
    assert "avx512f" not in flags
    assert cores == 2


def test_parse_cpuinfo_counts_hyperthreads_as_one_core() -> None:
    sibling = AVX2_EPYC.replace("core id\t: 1", "core id\t: 0")
    assert parse_cpuinfo(sibling)[2] == 1


def test_native_bf16_and_class_follow_the_isa() -> None:
    assert not host(("avx", "avx2")).native_bf16
    assert host(("avx", "avx2")).cpu_class == "avx2"
    assert host(("avx2", "avx512f")).cpu_class == "avx512"
    assert host(("avx512f", "avx512_bf16")).native_bf16
    assert host(("avx512f", "avx512_bf16")).cpu_class == "avx512-bf16"
    assert host(("amx_bf16",)).cpu_class == "amx-bf16"


def test_an_avx2_isa_cap_hides_avx512_and_native_bf16() -> None:
    flags = {"avx", "avx2", "fma", "avx512f", "avx512_bf16", "amx_bf16"}
    assert apply_isa_cap(flags, "AVX2") == {"avx", "avx2", "fma"}
    assert apply_isa_cap(flags, "avx512_core") == {"avx", "avx2", "fma", "avx512f"}
    assert apply_isa_cap(flags, "AVX512_CORE_BF16") == flags - {"amx_bf16"}
    assert apply_isa_cap(flags, None) == flags
    assert apply_isa_cap(flags, "SOMETHING_NEW") == flags


def test_detect_reads_this_machine_once() -> None:
    h = detect()
    assert h is detect()
    assert h.logical_cores >= 1 and h.usable_cpus
    assert set(h.isa) <= set(ISA_FLAGS)
    assert h.as_dict()["cpu_class"] == h.cpu_class
    assert h.cpu_class in h.label()


def test_amx_tiles_are_read_past_an_isa_cap(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    # vLLM asks the CPU, not oneDNN, whether to run w8a8 on its AMX kernel: a cap must not
    # hide the tiles from the plan's dtype choice.
    from pathlib import Path

    has_tiles = "amx_tile" in parse_cpuinfo(Path("/proc/cpuinfo").read_text())[1]
    monkeypatch.setenv("ONEDNN_MAX_CPU_ISA", "AVX2")
    capped = detect.__wrapped__()  # type: ignore[attr-defined]
    assert capped.amx_tiles == has_tiles
    assert not any(f.startswith("amx") for f in capped.isa)
