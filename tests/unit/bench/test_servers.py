"""The flags the bench starts its servers with: every engine setting given to `dragoman bench`
reaches the dragoman servers and vLLM's own server it compares."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from dragoman.bench import servers
from dragoman.settings import EngineSettings


def _flag(flags: list[str], name: str) -> str | None:
    return flags[flags.index(name) + 1] if name in flags else None


def test_engine_flags_pass_the_block_size_when_given() -> None:
    assert _flag(servers.engine_flags(EngineSettings(block_size=32)), "--block-size") == "32"


def test_engine_flags_leave_the_block_size_to_vllm_by_default() -> None:
    assert "--block-size" not in servers.engine_flags(EngineSettings())


def test_vllm_serve_peer_gets_the_block_size_when_given(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    class Plan:
        def env(self) -> dict[str, str]:
            return {}

    kw: dict[str, Any] = {
        "dtype": "bfloat16",
        "max_model_len": 2048,
        "max_num_seqs": 16,
        "max_num_batched_tokens": 8192,
        "gpu_memory_utilization": 0.3,
        "enforce_eager": True,
        "block_size": 32,
    }
    started: list[list[str]] = []
    monkeypatch.setattr("dragoman.engine.vllm_engine.engine_setup", lambda s, path: (Plan(), kw))
    monkeypatch.setattr(servers, "_popen", lambda cmd, log, env=None: started.append(cmd))
    monkeypatch.setattr(servers, "_wait", lambda launched, path, timeout, probe: launched)

    servers.launch_vllm_serve(tmp_path, "/models/m", EngineSettings(block_size=32))
    assert _flag(started[0], "--block-size") == "32"


def test_owning_servers_leaves_an_ignored_sighup_ignored() -> None:
    # Under nohup a closed terminal's SIGHUP stopped the bench as Ctrl-C does.
    import signal

    previous = signal.signal(signal.SIGHUP, signal.SIG_IGN)
    try:
        with servers.owning_servers():
            assert signal.getsignal(signal.SIGHUP) == signal.SIG_IGN
            assert callable(signal.getsignal(signal.SIGTERM))  # taken as Ctrl-C
        assert signal.getsignal(signal.SIGHUP) == signal.SIG_IGN
    finally:
        signal.signal(signal.SIGHUP, previous)


# `python -m` runs this as the bench's top level; the signal lands while a string is executed, as
# it does inside a lazy import's dataclass methods (h11's, on the first readiness poll).
_SIGNALLED_IN_STRING_CODE = """
import signal, sys
from dragoman.bench import command
from dragoman.cli import main

for sig in (signal.SIGTERM, signal.SIGHUP):  # as a user's terminal gives them
    signal.signal(sig, signal.SIG_DFL)
signal.signal(signal.SIGINT, signal.default_int_handler)

def run(s, console):
    exec("import os, time; os.kill(os.getpid(), {sig}); time.sleep(60)", {{}})

command._run_bench = run
sys.exit(main(["bench", "--out", sys.argv[1]]))
"""


@pytest.mark.parametrize(
    "sig", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT], ids=["sigterm", "sighup", "ctrl-c"]
)
def test_an_interrupt_inside_string_code_exits_130(tmp_path: Path, sig: signal.Signals) -> None:
    # CPython marked the KeyboardInterrupt that ended the string's code as unhandled although
    # the command caught it and stopped its servers; under `python -m` the bench then died of
    # SIGINT (-2) instead of exiting 130 (seen once in CI, SIGTERM as the first server started).
    (tmp_path / "signalled_probe.py").write_text(_SIGNALLED_IN_STRING_CODE.format(sig=int(sig)))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), *sys.path])}
    done = subprocess.run(
        [sys.executable, "-m", "signalled_probe", str(tmp_path / "out")],
        env=env,
        capture_output=True,
        timeout=120,
    )
    assert done.returncode == 130, done.stderr.decode()[-2000:]
