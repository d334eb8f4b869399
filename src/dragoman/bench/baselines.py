"""The seed's old architectures, kept ONLY as benchmark baselines (`dragoman serve
--architecture multiprocess|static-batch`: the CLI hands those to `open_for_serve` here, so the
product's serve path never imports them). Never the default; do not deploy these.

Part 1's request path, reproduced: the handler stores a task in a `Manager().dict()`, puts its
key on a `multiprocessing.JoinableQueue` (pickled IPC), a spawned worker process with its own
offline vLLM `LLM` takes one task at a time, puts the result on a result queue (pickled IPC),
and a thread consuming that queue sets the request's `asyncio.Event`. With `workers=2` each
worker loads its own copy of the model. `static-batch` (Part 2's first fix) is the same worker
collecting up to 16 tasks or 50 ms, then making one `LLM.generate` call for the batch.

Known and kept: an abandoned request cannot be aborted once queued (its result is dropped).
"""

from __future__ import annotations

import asyncio
import logging
import multiprocessing as mp
import queue
import threading
import time
import uuid
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

from dragoman.engine.prompts import PromptBuilder
from dragoman.engine.protocol import FinishReason, Terms, Translation
from dragoman.errors import EngineDead, EngineFailed
from dragoman.service.settings import ServeSettings
from dragoman.settings import EngineSettings

log = logging.getLogger(__name__)

STATIC_BATCH_SIZE = 16
STATIC_BATCH_TIMEOUT = 0.05


def _worker_main(
    worker: int,
    kwargs: dict[str, Any],
    penalty: float,
    batch: bool,
    tasks: Any,
    shared: Any,
    results: Any,
) -> None:
    from vllm import LLM

    llm = LLM(**kwargs)
    results.put(("ready", worker, None))
    try:
        _serve_tasks(llm, penalty, batch, tasks, shared, results)
    finally:
        # The engine's own processes wait for ours; without this they outlive the worker.
        llm.llm_engine.engine_core.shutdown()


def _serve_tasks(
    llm: Any, penalty: float, batch: bool, tasks: Any, shared: Any, results: Any
) -> None:
    from vllm import SamplingParams
    from vllm.inputs import TokensPrompt

    while True:
        key = tasks.get()
        if key is None:
            tasks.task_done()
            return
        keys = [key]
        if batch:  # collect up to 16 tasks or 50 ms, whichever comes first
            deadline = time.monotonic() + STATIC_BATCH_TIMEOUT
            while len(keys) < STATIC_BATCH_SIZE:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    break
                try:
                    nxt = tasks.get(timeout=remaining)
                except queue.Empty:
                    break
                if nxt is None:  # put the stop marker back for after this batch
                    tasks.task_done()
                    tasks.put(None)
                    break
                keys.append(nxt)
        payloads = [shared[k] for k in keys]
        started = time.time()
        try:
            outs = llm.generate(
                [TokensPrompt(prompt_token_ids=p["ids"]) for p in payloads],
                [
                    SamplingParams(
                        temperature=0.0, repetition_penalty=penalty, max_tokens=p["max_tokens"]
                    )
                    for p in payloads
                ],
                use_tqdm=False,
            )
            done = time.time()
            for k, p, out in zip(keys, payloads, outs, strict=True):
                c = out.outputs[0]
                results.put(
                    (
                        k,
                        "ok",
                        {
                            "text": c.text,
                            "finish": c.finish_reason,
                            "n_in": len(p["ids"]),
                            "n_out": len(c.token_ids),
                            "queue": started - p["enqueued"],
                            "inference": done - started,
                        },
                    )
                )
        except Exception as exc:  # report per task; the worker goes on
            for k in keys:
                results.put((k, "error", str(exc)))
        finally:
            for k in keys:
                del shared[k]
                tasks.task_done()


class MultiprocessTranslator:
    def __init__(
        self, settings: EngineSettings, languages: tuple[str, ...], workers: int, batch: bool
    ) -> None:
        from transformers import AutoTokenizer

        from dragoman.engine.vllm_engine import engine_setup, loaded_model_path

        model_path = loaded_model_path(settings)
        self.model_name = settings.model
        self.languages = languages
        self.prompts = PromptBuilder(
            AutoTokenizer.from_pretrained(model_path),
            settings.max_model_len,
            settings.output_ratio,
            settings.max_output_tokens,
        )
        ctx = mp.get_context("spawn")
        self._manager = ctx.Manager()
        self._shared = self._manager.dict()
        self._tasks = ctx.JoinableQueue()
        self._results = ctx.Queue()
        plan, kwargs = engine_setup(settings, model_path)
        self.plans = {settings.model: plan}  # the host's plan, before workers spawn
        self._procs = [
            ctx.Process(
                target=_worker_main,
                name=f"dragoman-worker-{i}",
                daemon=False,  # each worker spawns its own engine process
                args=(
                    i,
                    kwargs,
                    settings.repetition_penalty,
                    batch,
                    self._tasks,
                    self._shared,
                    self._results,
                ),
            )
            for i in range(workers)
        ]
        self._pending: dict[str, tuple[asyncio.Event, list[Any]]] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._reader: threading.Thread | None = None
        self._ready = threading.Semaphore(0)

    def _read_results(self) -> None:
        """The seed's event-queue consumer thread: wakes the waiting coroutine."""
        assert self._loop is not None
        while True:
            msg = self._results.get()
            if msg is None:
                return
            key, status, payload = msg
            if key == "ready":
                self._ready.release()
                continue
            entry = self._pending.get(key)
            if entry is not None:
                event, slot = entry
                slot.append((status, payload))
                self._loop.call_soon_threadsafe(event.set)

    async def start(self) -> None:
        self._loop = asyncio.get_running_loop()
        for p in self._procs:
            p.start()
        self._reader = threading.Thread(target=self._read_results, daemon=True)
        self._reader.start()
        for _ in self._procs:
            while not await asyncio.to_thread(self._ready.acquire, True, 1.0):
                if not all(p.is_alive() for p in self._procs):
                    raise EngineDead("a baseline worker died while loading")

    def stop(self) -> None:
        for _ in self._procs:
            self._tasks.put(None)
        for p in self._procs:
            p.join(timeout=30)
            if p.is_alive():
                p.kill()
        self._results.put(None)
        if self._reader is not None:
            self._reader.join(timeout=5)
        self._manager.shutdown()

    def num_unfinished_requests(self) -> int:
        return len(self._pending)

    def model_for(self, source: str, target: str) -> str:
        return self.model_name

    async def check_health(self) -> None:
        if not all(p.is_alive() for p in self._procs):
            raise EngineDead("a baseline worker process has died")

    async def translate(
        self, text: str, source: str, target: str, terms: Terms = ()
    ) -> Translation:
        await self.check_health()
        ids, max_tokens = self.prompts.build(text, source, target, terms)
        key = uuid.uuid4().hex
        event, slot = asyncio.Event(), list[Any]()
        self._pending[key] = (event, slot)
        try:
            self._shared[key] = {"ids": ids, "max_tokens": max_tokens, "enqueued": time.time()}
            self._tasks.put(key)
            await event.wait()
        finally:
            del self._pending[key]
        status, payload = slot[0]
        if status != "ok":
            raise EngineFailed(f"translation failed in the worker: {payload}")
        finish: FinishReason = "length" if payload["finish"] == "length" else "stop"
        return Translation(
            payload["text"].strip(),
            finish,
            payload["n_in"],
            payload["n_out"],
            max(0.0, payload["queue"]),
            payload["inference"],
        )


@asynccontextmanager
async def open_baseline(
    settings: EngineSettings, languages: tuple[str, ...], workers: int, batch: bool
) -> AsyncIterator[MultiprocessTranslator]:
    translator = MultiprocessTranslator(settings, languages, workers, batch)
    try:
        await translator.start()
        yield translator
    finally:
        await asyncio.to_thread(translator.stop)


def open_for_serve(
    settings: ServeSettings, languages: tuple[str, ...]
) -> AbstractAsyncContextManager[MultiprocessTranslator]:
    """The baseline `dragoman serve --architecture multiprocess|static-batch` asks for."""
    log.warning("serving the %s BASELINE (benchmarks only)", settings.architecture)
    batch = settings.architecture == "static-batch"
    return open_baseline(settings, languages, settings.workers, batch)
