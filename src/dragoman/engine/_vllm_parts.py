"""Parts of the vLLM engine that need none of its state: the request's timings, building the
engine with or without Prometheus collectors, and the probe of what a decode step costs."""

from __future__ import annotations

import asyncio
import time
import uuid
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from vllm.v1.engine.async_llm import AsyncLLM


def timings(metrics: Any, wall: float) -> tuple[float, float]:
    """(queue, inference) seconds from the engine's own request stats, else the wall time."""
    queued = getattr(metrics, "queued_ts", 0.0)
    scheduled = getattr(metrics, "scheduled_ts", 0.0)
    last = getattr(metrics, "last_token_ts", 0.0)
    if queued and scheduled and last >= scheduled >= queued:
        return scheduled - queued, last - scheduled
    return 0.0, wall


def no_prometheus() -> Any:
    """A stat logger that records nothing: keeps per-request stats (queue and inference time)
    on for an extra engine without registering a second set of `vllm:` collectors, which would
    replace the first engine's in the process-wide registry."""
    from vllm.v1.metrics.loggers import StatLoggerBase

    class NoPrometheus(StatLoggerBase):
        def __init__(self, vllm_config: Any, engine_index: int = 0) -> None:
            pass

        def record(self, *args: Any, **kwargs: Any) -> None:
            pass

        def log_engine_initialized(self) -> None:
            pass

    return NoPrometheus


def build_engine(args: Any, prometheus: bool) -> AsyncLLM:
    from vllm.v1.engine.async_llm import AsyncLLM
    from vllm.v1.executor import Executor

    if prometheus:
        return AsyncLLM.from_engine_args(args)
    config = args.create_engine_config()
    return AsyncLLM(
        vllm_config=config,
        executor_class=Executor.get_class(config),
        log_stats=False,
        stat_loggers=[no_prometheus()],  # custom loggers switch request stats on by themselves
    )


async def decode_step_seconds(
    engine: AsyncLLM, tokenizer: Any, streams: int, tokens: int, sampled: bool
) -> float:
    """Seconds a decode step takes with `streams` sequences of the same short prompt at once,
    `tokens` tokens each (no stop): greedy ones, or (`sampled`) as candidates are made, one
    greedy and the rest sampled with seeds, each with its log-probability. The time from the
    last one's first token to the last one's end, per step after the first."""
    from vllm import SamplingParams
    from vllm.inputs import TokensPrompt

    from dragoman.engine.prompts import SAMPLING

    ids = tokenizer.encode("Good morning. The meeting starts at nine, in the garden.")

    def params(seed: int) -> SamplingParams:
        if not sampled:
            return SamplingParams(temperature=0.0, max_tokens=tokens, ignore_eos=True)
        if seed == 0:
            return SamplingParams(temperature=0.0, max_tokens=tokens, ignore_eos=True, logprobs=0)
        chosen: dict[str, Any] = dict(SAMPLING)
        return SamplingParams(**chosen, seed=seed, max_tokens=tokens, ignore_eos=True, logprobs=0)

    async def one(seed: int) -> tuple[float, float]:
        first = None
        prompt = TokensPrompt(prompt_token_ids=ids)
        async for _ in engine.generate(prompt, params(seed), uuid.uuid4().hex):
            first = first or time.monotonic()
        return first or time.monotonic(), time.monotonic()

    times = await asyncio.gather(*(one(seed) for seed in range(streams)))
    start, end = max(t[0] for t in times), max(t[1] for t in times)
    return (end - start) / max(1, tokens - 1)
