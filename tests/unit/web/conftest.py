from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager

import httpx
import pytest
from fastapi import FastAPI

from dragoman.api.app import build_app
from dragoman.service.settings import ServeSettings
from dragoman.web.sampler import Sampler
from tests.fakes import FakeTranslator, factory_for
from tests.unit.api.conftest import engine_ready

Served = tuple[FastAPI, httpx.AsyncClient]


@pytest.fixture
def serve(tmp_path, monkeypatch) -> Callable[..., AbstractAsyncContextManager[Served]]:  # type: ignore[no-untyped-def]
    """`async with serve(metrics_key=...) as (app, client)`: an app on the fake engine whose
    stats are sampled only when a test calls sample()."""
    monkeypatch.setattr(Sampler, "interval", 3600.0)

    @asynccontextmanager
    async def make(**overrides: object) -> AsyncIterator[Served]:
        settings = ServeSettings(data_dir=tmp_path, **overrides)  # type: ignore[arg-type]
        app = build_app(settings, factory_for(FakeTranslator(delay=0.01)))
        async with app.router.lifespan_context(app):
            await engine_ready(app)
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(transport=transport, base_url="http://test") as c:
                yield app, c

    return make
