"""The ingress's Translator: no engine of its own. Each text goes by its pair to its model
group's deployment handle, with retries; the API above it (every surface, segmentation, cache,
admission, keys) is `dragoman serve`'s own, unchanged."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

from dragoman.deploy.ray.groups import ModelGroup
from dragoman.deploy.ray.retry import ModelUnavailable, RetryPolicy, with_retries
from dragoman.engine.host_defaults import EnginePlan
from dragoman.engine.protocol import ChatChunk, ChatParams, Terms, Translation
from dragoman.errors import ModelNotFound, UnsupportedLanguage

log = logging.getLogger(__name__)

# Retry-After for a known pair whose model has no live replica: a replica restart of the echo
# engine takes a few seconds, of a real one a model load (~40 s here); clients retry sooner
# and are told again rather than waiting on a guess.
UNAVAILABLE_RETRY = 5


class ReplicaView:
    """Live replicas per deployment, read from Serve's controller: every `interval` seconds
    while a deployment has none or just after a replica was lost (`poke`), else every
    IDLE_FACTOR x `interval`. A read is not cheap: once a second it took a tenth of the
    ingress's CPU under load (py-spy; Serve builds and pickles its whole status). None until
    the first read (then every deployment counts as live: Serve's routing waits for one)."""

    IDLE_FACTOR = 10

    def __init__(self, app_name: str, interval: float) -> None:
        self.app_name = app_name
        self.interval = interval
        self.running: dict[str, int] | None = None
        self._listeners: list[Callable[[dict[str, int]], None]] = []
        self._poked = asyncio.Event()
        self._reads = 0
        self._read = asyncio.Condition()

    def on_change(self, listener: Callable[[dict[str, int]], None]) -> None:
        self._listeners.append(listener)

    def live(self, deployment: str) -> bool:
        return self.running is None or self.running.get(deployment, 0) > 0

    def poke(self) -> None:
        """A replica was lost: read again soon rather than at the idle pace."""
        self._poked.set()

    async def fresh(self) -> None:
        """Wait for a read that starts after this call (two intervals and a bit at most): a
        deployment seen without replicas may have one by now (the ingress is up before its
        models are)."""
        seen = self._reads
        self.poke()
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(2 * self.interval + 2), self._read:
                await self._read.wait_for(lambda: self._reads > seen + 1)

    def _status(self) -> dict[str, int]:
        from ray import serve

        app = serve.status().applications.get(self.app_name)
        if app is None:
            return {}
        running = {}
        for name, d in app.deployments.items():
            states = {str(getattr(k, "value", k)): n for k, n in d.replica_states.items()}
            running[name] = int(states.get("RUNNING", 0))
        return running

    async def run(self) -> None:
        while True:
            self._poked.clear()
            try:
                running = await asyncio.to_thread(self._status)
            except Exception as exc:  # the controller restarting: keep the last view
                log.warning("reading Serve's status failed: %s", exc)
            else:
                if running != self.running:
                    self.running = running
                    for listener in self._listeners:
                        listener(running)
            async with self._read:
                self._reads += 1
                self._read.notify_all()
            await asyncio.sleep(self.interval)  # at most one read an interval, pokes or not
            if self.running is not None and all(self.running.values()):
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(self.interval * (self.IDLE_FACTOR - 1)):
                        await self._poked.wait()


class GatewayTranslator:
    def __init__(
        self,
        groups: list[ModelGroup],
        handles: dict[str, Any],
        roots: dict[str, str],
        view: ReplicaView | None,
        policy: RetryPolicy,
    ) -> None:
        self.groups = {g.key: g for g in groups}
        self.routes = {pair: g.key for g in groups for pair in g.pairs}
        self.handles = handles
        self.roots = roots
        self.view = view
        self.policy = policy
        self.model_name = "+".join(self.groups)
        self.languages = tuple(sorted({c for pair in self.routes for c in pair}))
        self.plans: dict[str, EnginePlan] = {}  # engines live in the model replicas
        if len(groups) > 1:  # as a multi-model server: /v1/languages lists pair -> model
            self.pairs = dict(self.routes)
        self.retries: dict[str, int] = {"transport": 0, "busy": 0}
        self._in_flight = 0
        self._rng = random.Random()

    def _count_retry(self, kind: str) -> None:
        self.retries[kind] = self.retries.get(kind, 0) + 1
        if kind == "transport" and self.view is not None:
            self.view.poke()

    async def _group(self, key: str) -> ModelGroup:
        group = self.groups[key]
        view = self.view
        if view is not None and not view.live(group.deployment):
            await view.fresh()
        if view is not None and not view.live(group.deployment):
            raise ModelUnavailable(
                f"model {key!r} has no live replica right now; retry shortly",
                retry_after=UNAVAILABLE_RETRY,
            )
        return group

    async def translate(
        self, text: str, source: str, target: str, terms: Terms = ()
    ) -> Translation:
        key = self.routes.get((source, target))
        if key is None:
            raise UnsupportedLanguage(f"no model on this server translates {source}->{target}")
        group = await self._group(key)
        handle = self.handles[key]
        self._in_flight += 1
        try:
            result: Translation = await with_retries(
                lambda: handle.translate.remote(text, source, target, terms),
                f"model {group.key!r}",
                self.policy,
                self._rng,
                self._count_retry,
            )
            return result
        finally:
            self._in_flight -= 1

    def model_for(self, source: str, target: str) -> str:
        return self.routes.get((source, target), self.model_name)

    def chat_models(self) -> dict[str, str]:
        return {key: self.roots.get(key, key) for key in self.groups}

    async def chat(
        self, model: str, messages: list[dict[str, str]], params: ChatParams
    ) -> AsyncGenerator[ChatChunk, None]:
        if model not in self.groups:
            raise ModelNotFound(f"no model named {model!r} on this server")
        group = await self._group(model)
        handle = self.handles[model].options(stream=True)
        self._in_flight += 1
        try:
            # Retried only until the first chunk: after it the client has part of an answer.
            stream: Any = None

            async def first() -> ChatChunk:
                nonlocal stream
                stream = handle.chat.remote(model, messages, params)
                try:
                    chunk: ChatChunk = await stream.__anext__()
                    return chunk
                except BaseException:
                    stream.cancel()
                    raise

            chunk = await with_retries(
                first, f"model {group.key!r}", self.policy, self._rng, self._count_retry
            )
            yield chunk
            finished = False
            try:
                async for chunk in stream:
                    yield chunk
                finished = True
            finally:
                if not finished:  # a client gone: the replica's generator stops, engine aborts
                    stream.cancel()
        finally:
            self._in_flight -= 1

    async def check_health(self) -> None:
        """Always healthy: one model's trouble must not take the whole service down (ray
        PR #63065); its pairs answer 503 meanwhile."""
        return None

    def num_unfinished_requests(self) -> int:
        return self._in_flight


@asynccontextmanager
async def open_gateway(
    groups: list[ModelGroup],
    handles: dict[str, Any],
    roots: dict[str, str],
    view: ReplicaView | None,
    policy: RetryPolicy,
) -> AsyncIterator[GatewayTranslator]:
    """The gateway translator, with the replica view polling while it is open."""
    task = asyncio.create_task(view.run(), name="replica-view") if view is not None else None
    try:
        yield GatewayTranslator(groups, handles, roots, view, policy)
    finally:
        if task is not None:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
