"""`dragoman serve`: the real engine behind the API, under uvicorn."""

from __future__ import annotations

import asyncio
import logging
import signal
import socket
from collections.abc import Callable, Sequence
from contextlib import AbstractAsyncContextManager
from types import FrameType

import uvicorn

from dragoman.api.app import build_app
from dragoman.api.hosts import hosts_for
from dragoman.api.lifecycle import TranslatorFactory
from dragoman.engine.protocol import Translator
from dragoman.errors import EngineDead
from dragoman.heap import settle
from dragoman.logs import setup as setup_logs
from dragoman.logs import uvicorn_log_config
from dragoman.models.catalogue import CATALOGUE
from dragoman.models.prepare import prepare
from dragoman.service.admission import Admission
from dragoman.service.settings import ServeSettings

log = logging.getLogger(__name__)


def languages_for(model: str, wanted: Sequence[str] = ()) -> tuple[str, ...]:
    """The languages `model` serves (its catalogue entry's, else all we know), restricted to
    `wanted` when given. A code it does not serve is wrong input (exit 2), as a bad flag is."""
    from dragoman.errors import ConfigError
    from dragoman.languages import NAMES

    entry = CATALOGUE.get(model)
    known = entry.languages if entry else tuple(NAMES)
    if not wanted:
        return known
    unknown = [code for code in wanted if code not in known]
    if unknown:
        raise ConfigError(f"--languages: {', '.join(unknown)} not served by {model}")
    return tuple(wanted)


Opener = Callable[[ServeSettings, tuple[str, ...]], AbstractAsyncContextManager[Translator]]


def serve(settings: ServeSettings, opener: Opener | None = None) -> None:
    """Serve with the engine `settings` ask for (`open_translator`), or what `opener` opens."""
    from dragoman.engine.choice import resolve_architecture
    from dragoman.listen import check_listen

    logging.getLogger("dragoman").setLevel(settings.log_level.upper())
    setup_logs(settings.log_format)  # before the engine starts: it takes the format along
    check_listen(settings.host, settings.port)  # before a model is prepared or loaded
    langs = languages_for(settings.model, settings.languages)
    settings, engine = resolve_architecture(settings)
    log.info("engine: %s (%s)", engine.value, engine.reason)
    if settings.architecture == "llama-cpp":
        check_llamacpp(settings)
    elif settings.architecture != "echo":
        for model in {settings.model} | {m.model for m in settings.models}:
            if model in CATALOGUE:
                from dragoman.engine.vllm_engine import weights_for

                weights = weights_for(settings.model_copy(update={"model": model}))
                prepare(model, settings.data_dir, weights=weights)  # instant when prepared

    open_engine = opener or open_translator
    run(settings, lambda: open_engine(settings, langs))


def open_translator(
    settings: ServeSettings, langs: tuple[str, ...]
) -> AbstractAsyncContextManager[Translator]:
    """The engine `settings` ask for, serving `langs` (one model), or the `[[models]]`."""
    if settings.architecture == "continuous" and settings.models:
        from dragoman.engine.multi import open_multi

        return open_multi(settings)
    if settings.architecture == "continuous":
        from dragoman.engine.vllm_engine import open_vllm

        entry = CATALOGUE.get(settings.model)
        return open_vllm(settings, langs, entry.prompt if entry else "chat")
    if settings.architecture == "llama-cpp":
        from dragoman.engine.llamacpp import open_llamacpp

        entry = CATALOGUE.get(settings.model)
        return open_llamacpp(settings, langs, entry.prompt if entry else "chat")
    if settings.architecture == "echo":
        from dragoman.engine.echo import open_echo

        if settings.models:  # each entry an echo under its own name: routing and tiers
            from dragoman.engine.multi import open_multi

            return open_multi(
                settings,
                lambda spec, languages, first: open_echo(spec.name, languages, settings.echo_delay),
            )
        return open_echo(f"echo:{settings.model}", langs, settings.echo_delay)
    from dragoman.errors import ConfigError

    # multiprocess and static-batch: the bench's baselines, started only by `dragoman serve`,
    # whose command hands them to the bench (bench/baselines.py) as the opener of `serve`.
    raise ConfigError(
        f"--architecture {settings.architecture} is a benchmark baseline: only `dragoman serve` "
        "starts it"
    )


def check_llamacpp(settings: ServeSettings) -> None:
    """Fail before binding the port: llama.cpp's server is there, the model ships a GGUF, and
    its tokenizer (the full prepared form) and GGUF are on disk."""
    from dragoman.engine.llamacpp import gguf_form, server_launcher
    from dragoman.errors import ConfigError
    from dragoman.models.prepare import gguf_path

    if settings.models:
        raise ConfigError("--architecture llama-cpp serves one model: no [[models]]")
    if settings.model not in CATALOGUE:
        raise ConfigError(
            f"--architecture llama-cpp runs a catalogue model's GGUF; {settings.model!r} is not "
            "in the catalogue (see `dragoman model list`)"
        )
    server_launcher(settings)
    prepare(settings.model, settings.data_dir, weights="full")  # the tokenizer; instant when done
    gguf_path(settings.model, settings.data_dir, form=gguf_form(settings))  # made once


class _Server(uvicorn.Server):
    """uvicorn, but SIGTERM drains instead of closing the port at once: readiness fails and
    new requests get 503 `draining` while admitted ones finish (up to --drain-seconds); then
    those left are aborted (each answered 503 `draining`), the usual graceful shutdown, and
    exit 0. A second SIGTERM, or SIGINT, stops at once, aborting what is in flight likewise."""

    def __init__(self, config: uvicorn.Config, admission: Admission, drain_seconds: float):
        super().__init__(config)
        self.admission = admission
        self.drain_seconds = drain_seconds
        self.fatal: str | None = None
        self._drain: asyncio.Task[None] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._term = False

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        self._loop = asyncio.get_running_loop()
        await super().startup(sockets)

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        if sig != signal.SIGTERM:
            # At once, but each request in flight is answered (503 `draining`), not cut off.
            if self._loop is not None:
                self._loop.call_soon_threadsafe(self._abort)
            super().handle_exit(sig, frame)
            return
        # Not recorded as captured: uvicorn would re-raise it after shutdown (exit 143).
        if self._term or self._loop is None:
            # a second SIGTERM, or one before start-up finished: at once, as SIGINT
            if self._loop is not None:
                self._loop.call_soon_threadsafe(self._abort)
            self.should_exit = True
            return
        self._term = True
        self._loop.call_soon_threadsafe(self._start_drain)

    def _start_drain(self) -> None:
        self._drain = asyncio.ensure_future(self.drain())

    async def drain(self) -> None:
        self.admission.drain()
        log.warning(
            "SIGTERM: draining; %d texts in flight get up to %g s",
            self.admission.in_flight,
            self.drain_seconds,
        )
        try:
            async with asyncio.timeout(self.drain_seconds):
                await self.admission.wait_idle()
            log.warning("drained: every admitted request answered")
        except TimeoutError:
            log.error(
                "drain: %d texts unfinished after %g s; aborting them",
                self.admission.in_flight,
                self.drain_seconds,
            )
            self._abort()
            # Their answers (503 `draining`) are sent in uvicorn's graceful shutdown.
        self.should_exit = True

    def _abort(self) -> None:
        aborted = self.admission.abort()
        if aborted:
            log.warning("%d requests in flight aborted: each answered 503 draining", aborted)

    def on_fatal(self, reason: str) -> None:
        # A dead engine takes the server down rather than answering 503 forever, and the exit
        # status says so, for the supervisor that restarts it.
        self.fatal = reason
        self.should_exit = True


def run(settings: ServeSettings, factory: TranslatorFactory) -> None:
    """Serve until SIGTERM (drain, then return: exit 0) or until the engine dies (raise
    EngineDead: exit 1)."""
    server: _Server | None = None
    # Known now, as it is bound: on a loopback address, only the local names (api/hosts.py).
    hosts = hosts_for(settings.host, settings.allowed_hosts)
    settings = settings.model_copy(update={"allowed_hosts": hosts})

    def on_fatal(reason: str) -> None:
        if server is not None:
            server.on_fatal(reason)

    app = build_app(settings, factory, on_fatal, after_ready=settle if settings.gc_freeze else None)
    config = uvicorn.Config(
        app,
        host=settings.host,
        port=settings.port,
        log_level=settings.log_level,
        log_config=uvicorn_log_config(settings.log_format),
        access_log=False,  # the edge logs each request with its id (api/edge.py)
        http=settings.http,
        h11_max_incomplete_event_size=settings.max_header_bytes,
        timeout_keep_alive=settings.keep_alive_seconds,
        # In-flight work had its drain already; what is left is sending the last answers.
        timeout_graceful_shutdown=2,
    )
    server = _Server(config, app.state.admission, settings.drain_seconds)
    with app.state.metrics.watch_gc():
        server.run()
    if server.fatal is not None:
        raise EngineDead(server.fatal)
