"""The ceiling: the offline engine with every prompt submitted at once. Runs in a spawned
process so its engine is gone, memory and cores freed, before any server starts."""

from __future__ import annotations

import multiprocessing as mp
import time
from collections.abc import Sequence
from typing import Any

from dragoman.bench.workloads import Item
from dragoman.settings import EngineSettings


def _run(settings: EngineSettings, items: Sequence[Item], out: Any) -> None:
    from vllm import LLM, SamplingParams
    from vllm.inputs import TokensPrompt

    from dragoman.engine.prompts import PromptBuilder
    from dragoman.engine.vllm_engine import engine_setup
    from dragoman.models.prepare import resolve_model

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
    out.put(
        {
            "requests": len(items),
            "seconds": seconds,
            "rps": len(items) / seconds,
            "output_tokens": tokens,
            "output_tokens_per_s": tokens / seconds,
        }
    )


def offline_ceiling(settings: EngineSettings, items: Sequence[Item]) -> dict[str, Any]:
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    proc = ctx.Process(
        target=_run, args=(settings, list(items), queue)
    )  # not daemonic: it spawns the engine
    proc.start()
    try:
        result: dict[str, Any] = queue.get(timeout=1800)
    finally:
        proc.join(timeout=60)
        if proc.is_alive():
            proc.kill()
    return result
