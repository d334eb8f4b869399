"""Parts of the vLLM engine that need none of its state: the request's timings, and building
the engine with or without Prometheus collectors."""

from __future__ import annotations

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
