"""All of dragoman's own Prometheus metrics, in one place, with bounded labels only.

Each app gets its own registry (tests build many apps in one process); `/metrics` serves it
together with the process-wide default registry, where vLLM's engine registers its `vllm:`
gauges and histograms, re-exported as they are.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from prometheus_client import (
    REGISTRY,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
)
from prometheus_client.core import InfoMetricFamily, Metric
from prometheus_client.registry import Collector
from starlette.types import ASGIApp, Message, Receive, Scope, Send

if TYPE_CHECKING:
    from dragoman.engine.host_defaults import EnginePlan
    from dragoman.service.admission import Admission

_LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60, 120)
# Finer, for the dashboard's windowed percentiles of a text's queue and compute time.
_STAGE_BUCKETS = (
    *(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.2, 0.35, 0.5, 0.75, 1.0, 1.5, 2.0),
    *(3.0, 4.0, 6.0, 8.0, 12.0, 16.0, 24.0, 32.0, 48.0, 64.0, 96.0, 128.0, 256.0),
)
_GC_BUCKETS = (0.0001, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0)


class HttpMetrics:
    """Requests, latency and in-flight count of one app, labelled by route template."""

    def __init__(self, registry: CollectorRegistry, prefix: str) -> None:
        self.requests = Counter(
            f"{prefix}_http_requests_total",
            "HTTP requests answered.",
            ["route", "method", "status"],
            registry=registry,
        )
        self.latency = Histogram(
            f"{prefix}_http_request_duration_seconds",
            "Time to answer an HTTP request.",
            ["route", "method"],
            buckets=_LATENCY_BUCKETS,
            registry=registry,
        )
        self.in_flight = Gauge(
            f"{prefix}_http_requests_in_flight", "HTTP requests being handled.", registry=registry
        )


class Metrics:
    def __init__(self, prefix: str = "dragoman") -> None:
        self.prefix = prefix
        self.registry = CollectorRegistry(auto_describe=True)
        r = self.registry
        self.http = HttpMetrics(r, prefix)
        self.translations = Counter(
            f"{prefix}_translations_total",
            "Texts translated, by how they ended.",
            ["finish_reason"],
            registry=r,
        )
        self.tokens = Counter(
            f"{prefix}_translation_tokens_total",
            "Tokens through the engine.",
            ["direction"],
            registry=r,
        )
        self.input_tokens = self.tokens.labels("input")
        self.output_tokens = self.tokens.labels("output")
        # Per text (the answer's queue_seconds and inference_seconds), on every architecture;
        # vLLM's own request_queue_time histogram counts engine requests of the real engine only.
        self.queue_time = Histogram(
            f"{prefix}_translation_queue_seconds",
            "Per translated text: the longest time its engine requests waited to be scheduled.",
            buckets=_STAGE_BUCKETS,
            registry=r,
        )
        self.inference_time = Histogram(
            f"{prefix}_translation_inference_seconds",
            "Per translated text: the longest time its engine requests spent computing.",
            buckets=_STAGE_BUCKETS,
            registry=r,
        )
        self.chat_completions = Counter(
            f"{prefix}_chat_completions_total",
            "Chat completions (OpenAI surface) finished, by how they ended.",
            ["finish_reason"],
            registry=r,
        )
        self.chat_tokens = Counter(
            f"{prefix}_chat_tokens_total",
            "Tokens through the engine for chat completions.",
            ["direction"],
            registry=r,
        )
        self.ready = Gauge(f"{prefix}_engine_ready", "1 when the engine answers.", registry=r)
        self.gc_pause = Histogram(
            f"{prefix}_gc_pause_seconds",
            "Python garbage collections in the server process, by generation (2 is a full "
            "one), and how long each held every request still (`dragoman serve` only).",
            ["generation"],
            buckets=_GC_BUCKETS,
            registry=r,
        )
        self.rejected = rejected_counter(r, prefix)
        self.admitted = Counter(
            f"{prefix}_admitted_total", "Requests admitted (translation and chat).", registry=r
        )
        self.coalesced = Counter(
            f"{prefix}_coalesced_total",
            "Texts that joined an identical translation already in flight (same model, pair "
            "and text: its shared-store lookup or its engine request) instead of starting "
            "their own.",
            registry=r,
        )
        self.cache_hits = Counter(
            f"{prefix}_cache_hits_total",
            "Sentences answered from the translation cache (no engine request), by level: "
            "local (in process) or shared (the --cache-url store, on a local miss).",
            ["level"],
            registry=r,
        )
        self.cache_misses = Counter(
            f"{prefix}_cache_misses_total",
            "Sentences not in the translation cache, by level (local, shared; a lookup the "
            "shared store did not answer, down or left alone, is a miss too).",
            ["level"],
            registry=r,
        )
        # Children asked on every request's path, found once (labels() costs ~2.5 us a call).
        self.local_hits = self.cache_hits.labels("local")
        self.local_misses = self.cache_misses.labels("local")
        self.cache_store_errors = Counter(
            f"{prefix}_cache_store_errors_total",
            "Failures of the shared cache store (--cache-url), by kind: get or set (down, "
            "slow, refused; the translation went on without it), invalid (a value not written "
            "by dragoman for its key, read as a miss).",
            ["kind"],
            registry=r,
        )
        self.glossary_store_errors = Counter(
            f"{prefix}_glossary_store_errors_total",
            "Failures of the stored glossaries' store (--glossary-url), by kind: read or write "
            "(down, slow, refused: the request was answered 503), invalid (a stored value not "
            "written by dragoman for its id, left out).",
            ["kind"],
            registry=r,
        )
        self.cache_bytes = Gauge(
            f"{prefix}_cache_bytes", "Bytes held by the translation cache.", registry=r
        )
        self.glossary_missed = Counter(
            f"{prefix}_glossary_missed_total",
            "Glossary terms a translation did not use although its source held them.",
            registry=r,
        )
        self.repairs = Counter(
            f"{prefix}_repairs_total",
            "Model replies repaired: a placeholder or tag lost, repeated or invented.",
            ["kind"],
            registry=r,
        )
        self.validation_retries = Counter(
            f"{prefix}_validation_retries_total",
            "Replies that failed their check (reason: placeholders, language, prompt, length), by "
            "what followed: asked again and the second passed (fixed) or not (failed), or no "
            "time left before the deadline to ask (skipped).",
            ["reason", "outcome"],
            registry=r,
        )
        self.candidates = Counter(
            f"{prefix}_candidates_total",
            "Units sent to the engine, by how many candidates were made for them (k; 1: the "
            "greedy reply alone) and why that many (auto, setting, best, request).",
            ["k", "why"],
            registry=r,
        )
        self.detections = Counter(
            f"{prefix}_detections_total",
            "Texts whose source language was detected (source auto), by outcome.",
            ["outcome"],
            registry=r,
        )
        self.expired = Counter(
            f"{prefix}_expired_total",
            "Admitted requests whose deadline passed (answered 504).",
            registry=r,
        )
        self.aborted = Counter(
            f"{prefix}_aborted_total",
            "Engine requests (texts) cancelled before they finished: deadline, client gone, "
            "another text of the request failed, or shutdown.",
            registry=r,
        )
        self.admitted_in_flight = Gauge(
            f"{prefix}_admitted_in_flight",
            "Engine requests (texts) admitted and not finished: running or waiting.",
            registry=r,
        )
        self.admission_limit = Gauge(
            f"{prefix}_admission_limit", "Most texts admitted at once (0: no bound).", registry=r
        )
        self.drain_rate = Gauge(
            f"{prefix}_drain_rate",
            "Texts finished per second lately (what Retry-After is derived from).",
            registry=r,
        )
        self.draining = Gauge(
            f"{prefix}_draining", "1 once shutdown began: new work refused.", registry=r
        )
        # Per-key use is labelled by the key's name from the keys file (the operator's few
        # names), never by the key; unnamed keys are not counted per key.
        self.key_requests = Counter(
            f"{prefix}_key_requests_total",
            "Requests admitted per named API key.",
            ["key_name"],
            registry=r,
        )
        self.key_characters = Counter(
            f"{prefix}_key_characters_total",
            "Characters admitted per named API key.",
            ["key_name"],
            registry=r,
        )

    @contextmanager
    def watch_gc(self) -> Iterator[None]:
        """Time every garbage collection of this process while inside (gc.callbacks is
        process-wide: the server's entry point holds this around its run)."""
        pauses = [self.gc_pause.labels(str(g)) for g in range(3)]
        started = 0.0

        def callback(phase: str, info: dict[str, int]) -> None:
            nonlocal started
            if phase == "start":
                started = time.perf_counter()
            else:
                pauses[info["generation"]].observe(time.perf_counter() - started)

        gc.callbacks.append(callback)
        try:
            yield
        finally:
            gc.callbacks.remove(callback)

    def watch_admission(self, admission: Admission) -> None:
        self.admitted_in_flight.set_function(lambda: admission.in_flight)
        self.admission_limit.set(admission.limit)
        self.drain_rate.set_function(admission.rate)
        self.draining.set_function(lambda: 1 if admission.draining else 0)

    def watch_engines(self, plans: Callable[[], dict[str, EnginePlan]]) -> None:
        """Export `{prefix}_engine_info`: one series per loaded engine, its labels the host
        class and the settings it got (a handful of values per model: bounded)."""
        self.registry.register(_EngineInfo(self.prefix, plans))

    def exposition(self) -> bytes:
        return generate_latest(self.registry) + generate_latest(REGISTRY)


class _EngineInfo(Collector):
    def __init__(self, prefix: str, plans: Callable[[], dict[str, EnginePlan]]) -> None:
        self.prefix = prefix
        self.plans = plans

    def describe(self) -> list[Metric]:
        return []  # labels are known only once engines load

    def collect(self) -> Iterator[Metric]:
        from dragoman.host import detect

        host = detect()
        family = InfoMetricFamily(
            f"{self.prefix}_engine", "Engine settings chosen for this host, per model."
        )
        for model, p in self.plans().items():
            family.add_metric(
                [],
                {
                    "model": model,
                    "engine": p.engine.value,  # vllm or llama.cpp
                    "device": p.device,
                    "cpu_class": host.cpu_class,
                    "dtype": p.dtype.value,
                    "threads": p.threads.value,
                    "kv_cache_gib": p.kvcache_gib.value,
                    "tcmalloc": "true" if p.tcmalloc.value else "false",
                },
            )
        yield family


def rejected_counter(registry: CollectorRegistry, prefix: str) -> Counter:
    return Counter(
        f"{prefix}_rejected_total",
        "Requests refused by a limit or policy before any engine work, by reason (the error "
        "code: overloaded, draining, rate_limited, body_too_large, invalid_api_key, ...).",
        ["reason"],
        registry=registry,
    )


# Methods as labels; any other is "other": h11 passes any token a client sends as a method,
# and one label value per token was a new series (and a child kept) for every one.
_METHODS = frozenset(("GET", "HEAD", "POST", "PUT", "DELETE", "OPTIONS", "PATCH"))


def _method_of(scope: Scope) -> str:
    method: str = scope["method"]
    return method if method in _METHODS else "other"


def _route_of(scope: Scope) -> str:
    route: Any = scope.get("route")
    path = getattr(route, "path", None)
    return path if isinstance(path, str) else "other"  # unmatched paths collapse to one label


class MetricsMiddleware:
    """Pure ASGI (not BaseHTTPMiddleware) so client disconnects still reach the handlers."""

    def __init__(self, app: ASGIApp, metrics: HttpMetrics) -> None:
        self.app = app
        self.metrics = metrics
        # Each (route, method, status)'s children, found once: prometheus_client's labels()
        # checks and locks on every call (~2-3 us each, twice a request). Bounded: routes are
        # the app's path templates ("other" for the rest), methods the usual seven ("other"),
        # statuses the few the app answers.
        self._children: dict[tuple[str, str, int], tuple[Any, Any]] = {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        status = 500
        started = time.perf_counter()

        async def send_wrapper(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        self.metrics.in_flight.inc()
        try:
            await self.app(scope, receive, send_wrapper)
        finally:
            self.metrics.in_flight.dec()
            key = (_route_of(scope), _method_of(scope), status)
            children = self._children.get(key)
            if children is None:
                route, method, _ = key
                children = self._children[key] = (
                    self.metrics.requests.labels(route, method, str(status)),
                    self.metrics.latency.labels(route, method),
                )
            children[0].inc()
            children[1].observe(time.perf_counter() - started)


class RouterMetrics:
    """The proxy's own metrics; the backend label takes configured backend names only."""

    def __init__(self, prefix: str = "dragoman_router") -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        r = self.registry
        self.http = HttpMetrics(r, prefix)
        self.upstream = Counter(
            f"{prefix}_backend_requests_total",
            "Requests sent to a backend, by answer status.",
            ["backend", "status"],
            registry=r,
        )
        self.errors = Counter(
            f"{prefix}_backend_errors_total",
            "Backend failures, by kind.",
            ["backend", "kind"],
            registry=r,
        )
        self.upstream_latency = Histogram(
            f"{prefix}_backend_request_duration_seconds",
            "Time a backend took to answer.",
            ["backend"],
            buckets=_LATENCY_BUCKETS,
            registry=r,
        )
        self.healthy = Gauge(
            f"{prefix}_backend_healthy", "1 while the backend is admitted.", ["backend"], registry=r
        )
        self.outstanding = Gauge(
            f"{prefix}_backend_outstanding",
            "Requests in flight to the backend.",
            ["backend"],
            registry=r,
        )
        self.retries = Counter(
            f"{prefix}_retries_total", "Requests retried on another backend.", registry=r
        )
        self.rejected = rejected_counter(r, prefix)

    def exposition(self) -> bytes:
        return generate_latest(self.registry)
