"""The engine host: what runs once the engine is up runs before the server says it is ready,
off the event loop."""

from __future__ import annotations

import asyncio
import threading
import time

import httpx
import pytest

from dragoman.api.app import build_app
from dragoman.api.lifecycle import EngineHost
from dragoman.engine.protocol import Translator
from dragoman.errors import EngineNotReady
from dragoman.service.settings import ServeSettings
from tests.fakes import FakeTranslator, factory_for


async def test_on_ready_runs_in_a_thread_before_the_host_is_ready() -> None:
    release = threading.Event()
    seen: list[tuple[str, bool]] = []

    def on_ready(translator: Translator) -> None:
        seen.append((host.state, threading.current_thread() is threading.main_thread()))
        release.wait(30)  # what a GIL-holding load looks like to the host: a long call

    host = EngineHost(factory_for(FakeTranslator()), on_ready=on_ready)
    async with host:
        deadline = time.monotonic() + 30
        while not seen:
            assert time.monotonic() < deadline, "on_ready never ran"
            await asyncio.sleep(0.01)  # the loop runs on while on_ready does
        assert seen == [("loading", False)]
        with pytest.raises(EngineNotReady):
            host.translator()
        release.set()
        while host.state != "ready":
            assert time.monotonic() < deadline, "the host never became ready"
            await asyncio.sleep(0.01)
        assert host.translator().model_name == "fake"


async def test_the_servers_after_ready_step_runs_before_ready(settings: ServeSettings) -> None:
    """build_app's `after_ready` (the server process freezes its heap there) runs once the
    engine is up, before /ready answers 200."""
    release = threading.Event()
    ran = threading.Event()

    def after_ready() -> None:
        ran.set()
        release.wait(30)

    app = build_app(settings, factory_for(FakeTranslator()), after_ready=after_ready)
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
            deadline = time.monotonic() + 30
            while not ran.is_set():
                assert time.monotonic() < deadline, "after_ready never ran"
                await asyncio.sleep(0.01)
            assert (await client.get("/ready")).status_code == 503
            release.set()
            while (await client.get("/ready")).status_code != 200:
                assert time.monotonic() < deadline, "never ready"
                await asyncio.sleep(0.01)
