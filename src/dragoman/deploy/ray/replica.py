"""A model replica: one Ray Serve replica that owns one engine for one model group, entered
through the same async context managers `dragoman serve` uses, and shut down with it."""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections.abc import AsyncGenerator
from contextlib import AbstractAsyncContextManager, AsyncExitStack
from typing import Any

from dragoman.deploy.groups import ModelGroup
from dragoman.engine.protocol import (
    ChatChunk,
    ChatEngine,
    ChatParams,
    Terms,
    Translation,
    Translator,
)
from dragoman.errors import ModelNotFound
from dragoman.service.settings import ServeSettings

log = logging.getLogger(__name__)


def open_group(settings: ServeSettings, group: ModelGroup) -> AbstractAsyncContextManager[Any]:
    """The engine context manager of one group: `dragoman serve`'s, for one model."""
    if settings.architecture == "echo":
        from dragoman.engine.echo import open_echo

        return open_echo(group.key, group.languages, settings.echo_delay)
    if settings.architecture not in ("continuous", "host"):  # Ray deploys vLLM's engine
        raise ValueError(f"architecture {settings.architecture!r} is not deployed on Ray")
    from dragoman.engine.vllm_engine import open_vllm

    engine_settings = settings.model_copy(update={"model": group.model})
    # A served name only for [[models]] entries: a single model answers under its own name.
    name = group.key if settings.models else None
    return open_vllm(engine_settings, group.languages, group.prompt, name)


async def prepare_models(settings: ServeSettings, models: set[str]) -> None:
    """What a replica does before its engine loads on a vLLM architecture: Ray's
    OMP_NUM_THREADS goes (Ray sets it to the actor's CPUs; with it set from outside, vLLM's
    EngineCore keeps 2 torch threads instead of 1, and they spin against the worker's threads
    bound to the same cores: 20-30% of the throughput, measured here; the plan's
    VLLM_CPU_OMP_THREADS_BIND decides, as under serve), and catalogue models are prepared
    (instant when they are; a fresh node prepares them)."""
    if settings.architecture not in ("continuous", "host"):
        return
    from dragoman.engine.vllm_engine import weights_for
    from dragoman.models.catalogue import CATALOGUE
    from dragoman.models.prepare import prepare

    os.environ.pop("OMP_NUM_THREADS", None)
    for model in sorted(models & set(CATALOGUE)):
        # The form the engine will load (--weights w8a8 needs its own directory).
        weights = weights_for(settings.model_copy(update={"model": model}))
        await asyncio.to_thread(prepare, model, settings.data_dir, weights=weights)


class ModelReplica:
    """Constructed by Serve inside the replica's actor, on its event loop (an async __init__):
    the replica counts as started once the engine is loaded."""

    async def __init__(self, settings: ServeSettings, group: ModelGroup) -> None:  # type: ignore[misc]
        started = time.monotonic()
        self.group = group
        await prepare_models(settings, {group.model})
        stack = AsyncExitStack()
        self._translator: Translator = await stack.enter_async_context(open_group(settings, group))
        self._stack: AsyncExitStack | None = stack
        self.start_seconds = time.monotonic() - started
        log.info("replica of %s ready in %.1f s", group.key, self.start_seconds)

    async def translate(self, text: str, source: str, target: str, terms: Terms) -> Translation:
        return await self._translator.translate(text, source, target, terms)

    async def chat(
        self, model: str, messages: list[dict[str, str]], params: ChatParams
    ) -> AsyncGenerator[ChatChunk, None]:
        """Streamed back chunk by chunk (the handle is called with stream=True); closing the
        stream at the ingress cancels this generator, which aborts the engine request."""
        if not isinstance(self._translator, ChatEngine):
            raise ModelNotFound(f"the model {model!r} does not chat")
        stream = self._translator.chat(model, messages, params)
        try:
            async for chunk in stream:
                yield chunk
        finally:
            await stream.aclose()

    async def check_health(self) -> None:
        """Serve's health check: the engine's own. EngineDead here restarts the replica."""
        await self._translator.check_health()

    def unfinished(self) -> int:
        return self._translator.num_unfinished_requests()

    async def __del__(self) -> None:
        # Serve calls this after the graceful-shutdown wait (no requests left, or the
        # timeout passed): the engine and its processes go with the replica. A replica whose
        # constructor failed has no stack.
        stack = getattr(self, "_stack", None)
        if stack is not None:
            self._stack = None
            await stack.aclose()
