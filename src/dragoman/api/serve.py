"""`dragoman serve`: the real engine behind the API, under uvicorn."""

from __future__ import annotations

import logging
from contextlib import AbstractAsyncContextManager

import uvicorn

from dragoman.api.app import build_app
from dragoman.engine.protocol import Translator
from dragoman.models.catalogue import CATALOGUE
from dragoman.models.prepare import prepare
from dragoman.settings import ServeSettings

log = logging.getLogger(__name__)


def languages_for(settings: ServeSettings) -> tuple[str, ...]:
    from dragoman.languages import NAMES

    entry = CATALOGUE.get(settings.model)
    return entry.languages if entry else tuple(NAMES)


def serve(settings: ServeSettings) -> None:
    from dragoman.engine.vllm_engine import open_vllm

    logging.getLogger("dragoman").setLevel(settings.log_level.upper())
    if settings.model in CATALOGUE:
        prepare(settings.model, settings.data_dir)  # instant when already prepared
    langs = languages_for(settings)

    def factory() -> AbstractAsyncContextManager[Translator]:
        if settings.architecture == "continuous":
            return open_vllm(settings, langs)
        from dragoman.engine.baselines import open_baseline

        log.warning("serving the %s BASELINE (benchmarks only)", settings.architecture)
        batch = settings.architecture == "static-batch"
        return open_baseline(settings, langs, settings.workers, batch)

    server: uvicorn.Server | None = None

    def on_fatal(reason: str) -> None:
        # A dead engine takes the server down rather than answering 503 forever.
        if server is not None:
            server.should_exit = True

    app = build_app(settings, factory, on_fatal)
    config = uvicorn.Config(
        app, host=settings.host, port=settings.port, log_level=settings.log_level,
        timeout_graceful_shutdown=30,
    )  # fmt: skip
    server = uvicorn.Server(config)
    server.run()
