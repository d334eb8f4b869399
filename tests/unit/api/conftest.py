from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpx
import pytest
from fastapi import FastAPI

from dragoman.api.app import build_app
from dragoman.service.settings import ServeSettings
from tests.fakes import FakeTranslator, factory_for


@pytest.fixture
def fake() -> FakeTranslator:
    return FakeTranslator()


@pytest.fixture
def settings(tmp_path) -> ServeSettings:  # type: ignore[no-untyped-def]
    return ServeSettings(data_dir=tmp_path, max_items=4, max_text_chars=200)


@pytest.fixture
async def app(fake: FakeTranslator, settings: ServeSettings) -> AsyncIterator[FastAPI]:
    app = build_app(settings, factory_for(fake))
    async with app.router.lifespan_context(app):
        await engine_ready(app)
        yield app


@pytest.fixture
async def client(app: FastAPI) -> AsyncIterator[httpx.AsyncClient]:
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://test") as c:
        yield c


Served = tuple[FastAPI, httpx.AsyncClient]


@pytest.fixture
def serve(fake: FakeTranslator, tmp_path):  # type: ignore[no-untyped-def]
    """`async with serve(max_admitted=4) as (app, client)`: an app on the fake engine with
    these settings (over the fixture's max_items=4, max_text_chars=200)."""

    @asynccontextmanager
    async def make(**overrides: object) -> AsyncIterator[Served]:
        base: dict[str, object] = {"data_dir": tmp_path, "max_items": 4, "max_text_chars": 200}
        app = build_app(ServeSettings(**{**base, **overrides}), factory_for(fake))  # type: ignore[arg-type]
        async with app.router.lifespan_context(app):
            await engine_ready(app)
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(transport=transport, base_url="http://test") as c:
                yield app, c

    return make


async def wait_for(condition, within: float = 5.0) -> None:  # type: ignore[no-untyped-def]
    """Poll `condition` until true, failing after `within` seconds (no fixed sleeps)."""
    loop = asyncio.get_running_loop()
    end = loop.time() + within
    while not condition():
        assert loop.time() < end, "condition not met in time"
        await asyncio.sleep(0.005)


async def engine_ready(app: FastAPI, within: float = 30.0) -> None:
    """Wait until the app's engine host, which loads in the background, is ready."""
    await wait_for(lambda: app.state.engine_host.state == "ready", within)
