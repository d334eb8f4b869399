"""`EngineHost`: loads the engine in the background so the server answers `/health` (and a
clear 503 on everything else) while the model loads, watches that it stays alive, and owns its
shutdown. A dead engine is reported once, to `on_fatal`, which stops the server."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from types import TracebackType
from typing import Literal

from dragoman.engine.host_defaults import EnginePlan
from dragoman.engine.protocol import Translator
from dragoman.errors import EngineDead, EngineNotReady

log = logging.getLogger(__name__)

State = Literal["loading", "ready", "failed", "stopped"]
TranslatorFactory = Callable[[], AbstractAsyncContextManager[Translator]]


class EngineHost:
    def __init__(
        self,
        factory: TranslatorFactory,
        on_fatal: Callable[[str], None] | None = None,
        check_interval: float = 5.0,
        on_ready: Callable[[Translator], None] | None = None,
    ) -> None:
        self._factory = factory
        self._on_ready = on_ready
        self._on_fatal = on_fatal
        self._check_interval = check_interval
        self._stop = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._translator: Translator | None = None
        self.state: State = "loading"
        self.error: str | None = None
        self.ready = asyncio.Event()
        """Set once the engine is up (work that needs it waits on this, not on polls)."""

    async def __aenter__(self) -> EngineHost:
        self._task = asyncio.create_task(self._run(), name="engine-host")
        return self

    async def __aexit__(
        self, et: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._stop.set()
        if self._task is not None:
            if self.state == "loading":
                self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
        self.state = "stopped"

    async def _run(self) -> None:
        try:
            async with self._factory() as translator:
                if self._on_ready is not None:
                    # Before "ready", in a thread: what it loads may hold the GIL for seconds
                    # (lingua's detector does), which would stall the first requests admitted.
                    await asyncio.to_thread(self._on_ready, translator)
                self._translator, self.state = translator, "ready"
                self.ready.set()
                await self._watch(translator)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            self.fail(f"engine failed to start: {exc}")
            log.exception("engine failed to start")
        finally:
            self._translator = None

    async def _watch(self, translator: Translator) -> None:
        """Until stopped, check the engine now and then: a death is noticed with no traffic."""
        while not self._stop.is_set():
            try:
                async with asyncio.timeout(self._check_interval):
                    await self._stop.wait()
            except TimeoutError:
                try:
                    await translator.check_health()
                except EngineDead as exc:
                    self.fail(exc.message)
                    await self._stop.wait()

    def fail(self, reason: str) -> None:
        """The engine is gone for good: report unhealthy and ask the server to stop."""
        if self.state == "failed":
            return
        self.state, self.error = "failed", reason
        log.error("%s", reason)
        if self._on_fatal is not None:
            self._on_fatal(reason)

    def plans(self) -> dict[str, EnginePlan]:
        """Each loaded engine's plan; empty while loading or without a real engine."""
        return dict(self._translator.plans) if self._translator is not None else {}

    def translator(self) -> Translator:
        if self.state == "ready" and self._translator is not None:
            return self._translator
        if self.state == "failed":
            raise EngineDead(self.error or "the engine has stopped")
        if self.state == "loading":
            raise EngineNotReady("the model is still loading; retry shortly")
        raise EngineNotReady("the server is shutting down")
