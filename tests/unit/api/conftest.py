from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import httpx
import pytest
from fastapi import FastAPI

from dragoman.api.app import build_app
from dragoman.settings import ServeSettings
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
        for _ in range(100):  # the host loads the engine in the background
            if app.state.engine_host.state == "ready":
                break
            await asyncio.sleep(0.01)
        yield app


@pytest.fixture
async def client(app: FastAPI) -> AsyncIterator[httpx.AsyncClient]:
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://test") as c:
        yield c
