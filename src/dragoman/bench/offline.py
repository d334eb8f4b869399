"""The offline batch: the engine alone with every prompt submitted at once, timed to its last
answer. The batch emptying (its drain) is in that time, so the figure sits below what the engine
does full and served throughput can pass it: a reference for the served figures, not a
ceiling (verdicts.py judges it as such). Runs in a process of
its own (`python -m dragoman.bench.offline JOB RESULT`), started as the bench's servers are
(servers.py): stopped with the bench by any path, its engine's processes with it (its own
process group), and sent SIGTERM by the kernel when the bench is SIGKILLed. Its engine is
gone, memory and cores freed, before any server starts."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from dragoman.errors import DragomanError, EngineDead
from dragoman.eval.workloads import Item
from dragoman.settings import EngineSettings


def _run(job: Path, result: Path) -> None:
    from vllm import LLM, SamplingParams
    from vllm.inputs import TokensPrompt

    from dragoman.engine.prompts import PromptBuilder
    from dragoman.engine.vllm_engine import engine_setup
    from dragoman.models.prepare import resolve_model

    given = json.loads(job.read_text())
    settings = EngineSettings(**given["settings"])
    items = [Item(**item) for item in given["items"]]
    _, kwargs = engine_setup(settings, resolve_model(settings.model, settings.data_dir))
    llm = LLM(**kwargs)
    prompts = PromptBuilder(
        llm.get_tokenizer(),
        settings.max_model_len,
        settings.output_ratio,
        settings.max_output_tokens,
    )
    built = [prompts.build(i.text, i.source, i.target) for i in items]
    params = [
        SamplingParams(
            temperature=0.0, repetition_penalty=settings.repetition_penalty, max_tokens=m
        )
        for _, m in built
    ]
    started = time.perf_counter()
    try:
        outs = llm.generate(
            [TokensPrompt(prompt_token_ids=ids) for ids, _ in built], params, use_tqdm=False
        )
        seconds = time.perf_counter() - started
    finally:
        # The engine's own processes wait for ours; without this they outlive it.
        llm.llm_engine.engine_core.shutdown()
    tokens = sum(len(o.outputs[0].token_ids) for o in outs)
    measured = {
        "requests": len(items),
        "seconds": seconds,
        "rps": len(items) / seconds,
        "output_tokens": tokens,
        "output_tokens_per_s": tokens / seconds,
    }
    result.write_text(json.dumps(measured))


def offline_ceiling(
    settings: EngineSettings,
    items: Sequence[Item],
    log_dir: Path,
    timeout: float = 1800.0,
    cancel: threading.Event | None = None,
) -> dict[str, Any]:
    """The ceiling's figures; its process's output is in `log_dir`/offline.log. Run in a
    worker thread, it returns soon after `cancel` is set (the bench interrupted), its process
    stopped: asyncio.run waits for its worker threads before the bench can stop anything."""
    from dragoman.bench.servers import _popen, _stop

    log_dir.mkdir(parents=True, exist_ok=True)
    job, result, log = (log_dir / f"offline{end}" for end in ("-job.json", ".json", ".log"))
    result.unlink(missing_ok=True)
    fields = set(EngineSettings.model_fields)
    given = {
        "settings": settings.model_dump(mode="json", include=fields),
        "items": [dataclasses.asdict(item) for item in items],
    }
    job.write_text(json.dumps(given))
    process = _popen([sys.executable, "-m", "dragoman.bench.offline", str(job), str(result)], log)
    deadline = time.monotonic() + timeout
    code: int | None = None
    try:
        while code is None and time.monotonic() < deadline:
            if cancel is not None and cancel.is_set():
                raise KeyboardInterrupt  # nobody reads it: the bench is stopping
            with contextlib.suppress(subprocess.TimeoutExpired):
                code = process.wait(timeout=0.2)
    finally:
        _stop(process)  # and what it left in its group; gone from the servers to stop
    if code == 0 and result.is_file():
        figures: dict[str, Any] = json.loads(result.read_text())
        return figures
    # One line, `dragoman: error: ...` (exit 1), not a traceback holding the ceiling's own
    # traceback: its last line says what failed, its log the rest.
    state = f"not done in {timeout:g} s" if code is None else f"failed (exit {code})"
    lines = log.read_text(errors="replace").strip().splitlines() if log.is_file() else []
    last = lines[-1].removeprefix("dragoman: error: ") if lines else "no output"
    raise EngineDead(f"offline ceiling {state}: {last}; its output: {log}")


if __name__ == "__main__":
    from dragoman.interrupts import stops_as_ctrl_c

    # The parent-death SIGTERM (or the bench's stop) unwinds: the engine shuts its processes
    # down on the way out, where the signal's default would leave them.
    with stops_as_ctrl_c():
        try:
            _run(Path(sys.argv[1]), Path(sys.argv[2]))
        except DragomanError as exc:  # a model not prepared: its message, as the CLI says it
            print(f"dragoman: error: {exc.message}", file=sys.stderr)
            sys.exit(1)
