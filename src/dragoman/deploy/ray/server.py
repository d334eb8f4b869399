"""The whole server in one replica (`--ray-layout whole`): each Serve replica runs what
`dragoman serve` runs, the API app and the engines of every model group, so a request crosses
one Ray hop (Serve's proxy to the replica) instead of two (proxy, ingress, model replica).
Replicas scale as one: each carries every pair."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any

from fastapi import FastAPI

from dragoman.deploy.ray.replica import prepare_models
from dragoman.deploy.ray.settings import RaySettings
from dragoman.engine.protocol import Translator
from dragoman.errors import EngineDead

log = logging.getLogger(__name__)


class ServerReplica:
    """Constructed by Serve inside the replica's actor (an async __init__): the engines load
    here, so the replica counts as started, and gets traffic, once they are up."""

    async def __init__(self, settings: RaySettings) -> None:  # type: ignore[misc]
        from dragoman.api.serve import check_llamacpp, languages_for, open_translator
        from dragoman.engine.choice import resolve_architecture

        started = time.monotonic()
        # This node's engine, as `dragoman serve` picks it (llama.cpp on an AVX2-only CPU).
        settings, engine = resolve_architecture(settings)
        log.info("engine: %s (%s)", engine.value, engine.reason)
        self.settings = settings
        if settings.architecture == "llama-cpp":
            await asyncio.to_thread(check_llamacpp, settings)
        else:
            await prepare_models(settings, {settings.model} | {m.model for m in settings.models})
        langs = languages_for(settings.model, settings.languages)
        stack = AsyncExitStack()
        self._translator: Translator = await stack.enter_async_context(
            open_translator(settings, langs)
        )
        self._stack: AsyncExitStack | None = stack
        self._app: FastAPI | None = None
        log.info("server replica ready in %.1f s", time.monotonic() - started)

    def __serve_build_asgi_app__(self) -> FastAPI:
        from dragoman.api.app import build_app

        translator = self._translator

        @asynccontextmanager
        async def loaded() -> AsyncIterator[Translator]:
            yield translator  # loaded in __init__; the replica's __del__ shuts it down

        # No on_fatal: a dead engine fails the health check below, and Serve replaces the
        # replica.
        # Serve answers with the request's id itself (edge.py: echo_id).
        self._app = build_app(self.settings, loaded, echo_request_id=False)
        return self._app

    async def check_health(self) -> None:
        """Serve's health check: the engine's own, as the app's watcher last saw it."""
        await self._translator.check_health()
        host: Any = self._app.state.engine_host if self._app is not None else None
        if host is not None and host.state == "failed":
            raise EngineDead(host.error or "the engine has stopped")

    async def __del__(self) -> None:
        # After Serve's graceful-shutdown wait: the engines and their processes go with the
        # replica. A replica whose constructor failed has no stack.
        stack = getattr(self, "_stack", None)
        if stack is not None:
            self._stack = None
            await stack.aclose()
