"""`dragoman serve`: the real engine behind the API, under uvicorn."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from contextlib import AbstractAsyncContextManager

import uvicorn

from dragoman.api.app import build_app
from dragoman.engine.protocol import Translator
from dragoman.models.catalogue import CATALOGUE
from dragoman.models.prepare import prepare
from dragoman.settings import ServeSettings

log = logging.getLogger(__name__)


def languages_for(model: str, wanted: Sequence[str] = ()) -> tuple[str, ...]:
    """The languages `model` serves (its catalogue entry's, else all we know), restricted to
    `wanted` when given."""
    from dragoman.errors import UnsupportedLanguage
    from dragoman.languages import NAMES

    entry = CATALOGUE.get(model)
    known = entry.languages if entry else tuple(NAMES)
    if not wanted:
        return known
    unknown = [code for code in wanted if code not in known]
    if unknown:
        raise UnsupportedLanguage(f"--languages: {', '.join(unknown)} not served by {model}")
    return tuple(wanted)


def serve(settings: ServeSettings) -> None:
    from dragoman.engine.vllm_engine import open_vllm

    logging.getLogger("dragoman").setLevel(settings.log_level.upper())
    langs = languages_for(settings.model, settings.languages)
    if settings.architecture != "echo":
        for model in {settings.model} | {m.model for m in settings.models}:
            if model in CATALOGUE:
                prepare(model, settings.data_dir)  # instant when already prepared

    def factory() -> AbstractAsyncContextManager[Translator]:
        if settings.architecture == "continuous" and settings.models:
            from dragoman.engine.multi import open_multi

            return open_multi(settings)
        if settings.architecture == "continuous":
            entry = CATALOGUE.get(settings.model)
            return open_vllm(settings, langs, entry.prompt if entry else "chat")
        if settings.architecture == "echo":
            from dragoman.engine.echo import open_echo

            return open_echo(f"echo:{settings.model}", langs, settings.echo_delay)
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
        app,
        host=settings.host,
        port=settings.port,
        log_level=settings.log_level,
        timeout_graceful_shutdown=30,
    )
    server = uvicorn.Server(config)
    server.run()
