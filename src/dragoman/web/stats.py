"""What `/v1/stats` answers, from the same registries `/metrics` exposes: a server's admitted,
refused and aborted work, throughput, engine load, latency split into queue and compute, and
CPU; the proxy's traffic and every backend's state."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from prometheus_client import REGISTRY

from dragoman.web import _samples as s
from dragoman.web.sampler import Point, Sampler

if TYPE_CHECKING:
    from dragoman.api.lifecycle import EngineHost
    from dragoman.metrics import Metrics, RouterMetrics
    from dragoman.router.backends import Pool

# Routes whose latency the dashboard shows: the translation surfaces and chat.
WORK_ROUTES = ("/v1/translate", "/translate", "/v2/translate", "/v1/chat/completions")


def _rate(now: s.Raw, before: s.Raw, name: str, seconds: float, **want: Any) -> float:
    """Per second between two readings of a counter (a labelled counter with no series yet
    has no samples: zero)."""
    a, b = s.total(now, name, **want) or 0.0, s.total(before, name, **want) or 0.0
    return round(max(0.0, a - b) / seconds, 3) if seconds > 0 else 0.0


def _quantiles(now: s.Raw, then: s.Raw, name: str, key: str, **want: Any) -> dict[str, Any]:
    a, b = s.buckets(now, name, **want), s.buckets(then, name, **want)
    out: dict[str, Any] = {}
    for q, label in ((0.5, "p50"), (0.99, "p99")):
        v = s.quantile(q, a, b)
        out[f"{key}_{label}"] = None if v is None else round(v, 4)
    return out


def _int(v: float | None) -> int | None:
    return None if v is None else round(v)


def _count(raw: s.Raw, name: str, **want: Any) -> int:
    return round(s.total(raw, name, **want) or 0.0)


def _by_reason(raw: s.Raw, name: str) -> dict[str, int]:
    return {k: round(v) for k, v in s.by_label(raw, name, "reason").items()}


class ServerStats(Sampler):
    """A dragoman server: its own metrics and vLLM's gauges from the process-wide registry
    (present only with the real engine; the echo and baseline architectures have none)."""

    def __init__(self, metrics: Metrics, host: EngineHost, architecture: str) -> None:
        super().__init__()
        self.metrics = metrics
        self.host = host
        self.architecture = architecture
        self.p = metrics.prefix

    def read(self) -> s.Raw:
        return s.read([self.metrics.registry, REGISTRY], (self.p, "vllm:"))

    def _unfinished(self) -> int | None:
        try:
            return self.host.translator().num_unfinished_requests()
        except Exception:  # not loaded yet, or stopped
            return None

    def point(self, now: s.Raw, previous: s.Raw, window_start: s.Raw, seconds: float) -> Point:
        p = self.p
        running = s.total(now, "vllm:num_requests_running")
        tokens = {"direction": ["output"]}
        out_tokens = [
            _rate(now, previous, f"{p}_translation_tokens_total", seconds, **tokens),
            _rate(now, previous, f"{p}_chat_tokens_total", seconds, **tokens),
        ]
        kv = s.total(now, "vllm:kv_cache_usage_perc")
        return {
            "requests_per_s": _rate(now, previous, f"{p}_admitted_total", seconds),
            "texts_per_s": _rate(now, previous, f"{p}_translations_total", seconds),
            "output_tokens_per_s": round(sum(v or 0.0 for v in out_tokens), 1),
            "rejected_per_s": _rate(now, previous, f"{p}_rejected_total", seconds),
            "aborted_per_s": _rate(now, previous, f"{p}_aborted_total", seconds),
            # vLLM's scheduler gauges; without them, the engine's own count of unfinished work.
            "running": _int(running) if running is not None else self._unfinished(),
            "waiting": _int(s.total(now, "vllm:num_requests_waiting")),
            "kv_cache_percent": None if kv is None else round(100 * kv, 1),
            "in_flight": _int(s.total(now, f"{p}_admitted_in_flight")),
            **_quantiles(now, window_start, f"{p}_translation_queue_seconds", "queue"),
            **_quantiles(now, window_start, f"{p}_translation_inference_seconds", "inference"),
            **_quantiles(
                now,
                window_start,
                f"{p}_http_request_duration_seconds",
                "latency",
                route=WORK_ROUTES,
            ),
        }

    def header(self) -> dict[str, Any]:
        p, raw = self.p, self._raws[-1][1] if self._raws else {}
        try:
            model: str | None = self.host.translator().model_name
        except Exception:
            model = None
        return {
            "kind": "server",
            "model": model,
            "engine": self.host.state,
            "architecture": self.architecture,
            "engine_metrics": "vllm:num_requests_running" in raw,
            "admission_limit": _int(s.total(raw, f"{p}_admission_limit")),
            "totals": {
                "admitted": _count(raw, f"{p}_admitted_total"),
                "translations": _count(raw, f"{p}_translations_total"),
                "output_tokens": _count(raw, f"{p}_translation_tokens_total", direction=["output"]),
                "rejected": _by_reason(raw, f"{p}_rejected_total"),
                "aborted": _count(raw, f"{p}_aborted_total"),
                "expired": _count(raw, f"{p}_expired_total"),
            },
        }


class RouterStats(Sampler):
    """`dragoman route`: its own traffic, and each backend's health, load, rate and latency as
    the proxy sees them."""

    def __init__(self, metrics: RouterMetrics, pool: Pool, prefix: str = "dragoman_router"):
        super().__init__()
        self.metrics = metrics
        self.pool = pool
        self.p = prefix

    def read(self) -> s.Raw:
        return s.read([self.metrics.registry], (self.p,))

    def point(self, now: s.Raw, previous: s.Raw, window_start: s.Raw, seconds: float) -> Point:
        p = self.p
        backends = {}
        for b in self.pool.backends:
            one = {"backend": [b.name]}
            backends[b.name] = {
                "healthy": b.healthy,
                "outstanding": b.outstanding,
                "requests_per_s": _rate(
                    now, previous, f"{p}_backend_requests_total", seconds, **one
                ),
                "errors_per_s": _rate(now, previous, f"{p}_backend_errors_total", seconds, **one),
                **_quantiles(
                    now, window_start, f"{p}_backend_request_duration_seconds", "latency", **one
                ),
            }
        return {
            "requests_per_s": _rate(
                now, previous, f"{p}_http_requests_total", seconds, route=WORK_ROUTES
            ),
            "rejected_per_s": _rate(now, previous, f"{p}_rejected_total", seconds),
            "retries_per_s": _rate(now, previous, f"{p}_retries_total", seconds),
            **_quantiles(
                now,
                window_start,
                f"{p}_http_request_duration_seconds",
                "latency",
                route=WORK_ROUTES,
            ),
            "backends": backends,
        }

    def header(self) -> dict[str, Any]:
        p, raw = self.p, self._raws[-1][1] if self._raws else {}
        return {
            "kind": "router",
            "backends": [
                {
                    "name": b.name,
                    "url": b.url,
                    "healthy": b.healthy,
                    "outstanding": b.outstanding,
                    "pairs": len(b.pairs),
                }
                for b in self.pool.backends
            ],
            "totals": {
                "requests": _count(raw, f"{p}_http_requests_total", route=WORK_ROUTES),
                "rejected": _by_reason(raw, f"{p}_rejected_total"),
                "retries": _count(raw, f"{p}_retries_total"),
            },
        }
