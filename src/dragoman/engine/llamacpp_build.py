"""Build llama.cpp's `llama-server` and `llama-batched-bench` from the source distribution of
`llama-cpp-python` (it vendors llama.cpp), once, under the data directory, and assemble the
model's GGUF beside the prepared model: what the llama-cpp engine starts when neither
--llama-server nor the prebuilt wheel gives it a server, and what the `llama-server` bench peer
runs.

`scripts/build-llama-cpp` runs this. Idempotent: a finished build is reused, an interrupted one
resumes (cmake's own incremental build); the source is unpacked to a temporary directory and
renamed into place. About 10 minutes on 2 cores, so it is not part of `scripts/test` or CI.
"""

from __future__ import annotations

import logging
import platform
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

from dragoman.errors import DragomanError
from dragoman.settings import LlamaCppSettings

log = logging.getLogger(__name__)

TARGETS = ("llama-server", "llama-batched-bench")
# GGML_NATIVE: compiled for this CPU's ISA (AVX2, AVX-512, ...), as a user building it would.
# Less AMX: on a Xeon with amx_tile, `-march=native` compiles in ggml's AMX kernels, and this
# version's crash at their first tile instruction (SIGILL in tinygemm_kernel_amx, llama-server
# and llama-batched-bench alike, on both the shipped GGUF and the Q8_0 form; upstream names a
# tile configuration the compiler drops and a per-thread AMX permission it never asks for).
# An explicit -mno-* wins over -march=native in either order, so AVX-512 VNNI runs instead.
_NO_AMX = "-mno-amx-tile -mno-amx-int8 -mno-amx-bf16"
CMAKE_FLAGS = (
    "-DGGML_NATIVE=ON",
    "-DLLAMA_CURL=OFF",
    "-DCMAKE_BUILD_TYPE=Release",
    *(
        (f"-DCMAKE_C_FLAGS={_NO_AMX}", f"-DCMAKE_CXX_FLAGS={_NO_AMX}")
        if platform.machine() in ("x86_64", "AMD64")
        else ()
    ),
)
# Written beside the binaries once they are built with CMAKE_FLAGS: a build made with other
# flags (an earlier version's, AMX included) is built again rather than reused.
STAMP = "dragoman-cmake-flags.txt"
STAMPED = "\n".join(CMAKE_FLAGS)


def home(data_dir: Path, version: str) -> Path:
    return data_dir / "llama.cpp" / version


def binary(data_dir: Path, version: str, name: str) -> Path:
    """Where the build puts `name` (llama-server, llama-batched-bench)."""
    return home(data_dir, version) / "src" / "build" / "bin" / name


def stamp(data_dir: Path, version: str) -> Path:
    """The file that says which flags the build under `data_dir` was made with (STAMPED)."""
    return home(data_dir, version) / "src" / "build" / STAMP


def is_built(data_dir: Path, version: str) -> bool:
    """Every target is there, built with today's CMAKE_FLAGS."""
    try:
        flags = stamp(data_dir, version).read_text()
    except OSError:
        return False
    return flags == STAMPED and all(binary(data_dir, version, t).is_file() for t in TARGETS)


def stale(data_dir: Path, version: str) -> bool:
    """A build is there, but not one made with today's CMAKE_FLAGS (an earlier dragoman's,
    which let llama.cpp's AMX code in): not used until scripts/build-llama-cpp builds it again."""
    return binary(data_dir, version, "llama-server").is_file() and not is_built(data_dir, version)


STALE = (
    "was built by an earlier dragoman with other flags (they let in llama.cpp's AMX code, which "
    "crashes on CPUs with AMX): run scripts/build-llama-cpp to build it again"
)


def _run(cmd: list[str], cwd: Path | None = None) -> None:
    log.info("$ %s", " ".join(cmd))
    done = subprocess.run(cmd, cwd=cwd, check=False)
    if done.returncode != 0:
        raise DragomanError(f"{cmd[0]} failed ({done.returncode}): {' '.join(cmd)}")


def fetch_source(data_dir: Path, version: str) -> Path:
    """llama.cpp's source tree from llama-cpp-python's sdist, through pip (its configured
    index), under `<data_dir>/llama.cpp/<version>/src`."""
    src = home(data_dir, version) / "src"
    if (src / "CMakeLists.txt").is_file():
        return src
    src.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=".sdist-", dir=src.parent) as tmp:
        work = Path(tmp)
        _run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "--no-binary",
                ":all:",
                "--no-deps",
                f"llama-cpp-python=={version}",
                "-d",
                str(work),
            ]
        )
        archive = next(work.glob("llama_cpp_python-*.tar.gz"))
        with tarfile.open(archive) as tar:
            tar.extractall(work, filter="data")
        vendored = work / f"llama_cpp_python-{version}" / "vendor" / "llama.cpp"
        if not (vendored / "CMakeLists.txt").is_file():
            raise DragomanError(f"{archive.name} holds no vendor/llama.cpp")
        if src.exists():  # a stale, unfinished tree
            shutil.rmtree(src)
        vendored.rename(src)
    return src


def build(data_dir: Path, version: str, jobs: int = 2) -> dict[str, Path]:
    """Build (or reuse) the binaries; return their paths by name."""
    if not is_built(data_dir, version):
        for tool in ("cmake", "c++"):
            if shutil.which(tool) is None:
                raise DragomanError(f"building llama.cpp needs {tool} on PATH")
        src = fetch_source(data_dir, version)
        gen = ["-G", "Ninja"] if shutil.which("ninja") else []
        _run(["cmake", "-B", "build", *gen, *CMAKE_FLAGS], cwd=src)
        _run(["cmake", "--build", "build", "--target", *TARGETS, f"-j{jobs}"], cwd=src)
        stamp(data_dir, version).write_text(STAMPED)
    return {t: binary(data_dir, version, t) for t in TARGETS}


def main(argv: list[str] | None = None) -> int:
    from dragoman.argv import parse
    from dragoman.models.prepare import gguf_path

    logging.basicConfig(level=logging.INFO, format="%(message)s")
    s = parse(LlamaCppSettings, sys.argv[1:] if argv is None else argv, "build-llama-cpp")
    try:
        paths = build(s.data_dir, s.llama_cpp_version, s.build_jobs)
        paths["gguf"] = gguf_path(s.model, s.data_dir)
    except DragomanError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    for name, path in paths.items():
        print(f"{name}: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
