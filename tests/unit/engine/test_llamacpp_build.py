from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from dragoman.settings import LLAMA_CPP_PYTHON_VERSION


def test_the_build_leaves_llama_cpps_amx_code_out_on_x86(
    tmp_path: Path, fake_llamacpp_build: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    # llama.cpp 0.3.36's AMX kernels crash (SIGILL) at their first tile instruction on a Xeon
    # with amx_tile; -march=native compiles them in unless each AMX extension is turned off.
    import importlib
    import platform
    import subprocess

    from dragoman.engine import llamacpp_build as b

    monkeypatch.setattr(platform, "machine", lambda: "x86_64")
    flags = importlib.reload(b).CMAKE_FLAGS
    c_flags = next(f for f in flags if f.startswith("-DCMAKE_C_FLAGS="))
    assert "-DGGML_NATIVE=ON" in flags
    assert f"-DCMAKE_CXX_FLAGS={c_flags.partition('=')[2]}" in flags
    # what the compiler makes of them beside -march=native: no AMX macro is defined
    gcc = ["gcc", *c_flags.partition("=")[2].split(), "-march=native", "-dM", "-E", "-"]
    if platform.uname().machine == "x86_64" and shutil.which("gcc"):
        macros = subprocess.run(gcc, input="", capture_output=True, text=True, check=True).stdout
        assert "__AMX_" not in macros and "__AVX2__" in macros
    monkeypatch.setattr(platform, "machine", lambda: "aarch64")
    assert not any("amx" in f for f in importlib.reload(b).CMAKE_FLAGS)
    monkeypatch.undo()
    importlib.reload(b)
    # a build stamped with other flags is stale, not reused
    fake_llamacpp_build(tmp_path)
    assert b.is_built(tmp_path, LLAMA_CPP_PYTHON_VERSION)
    assert not b.stale(tmp_path, LLAMA_CPP_PYTHON_VERSION)
    b.stamp(tmp_path, LLAMA_CPP_PYTHON_VERSION).write_text("-DGGML_NATIVE=ON")
    assert b.stale(tmp_path, LLAMA_CPP_PYTHON_VERSION)
