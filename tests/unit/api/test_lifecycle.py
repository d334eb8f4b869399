"""The engine host: what runs once the engine is up runs before the server says it is ready,
off the event loop."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

from dragoman.api.lifecycle import EngineHost
from dragoman.engine.protocol import Translator
from dragoman.errors import EngineNotReady
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
