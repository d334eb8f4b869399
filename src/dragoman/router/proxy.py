"""Forward one translation to the best backend; one retry elsewhere when a backend cannot be
reached or answers 503 (translation is idempotent). Bodies pass through untouched."""

from __future__ import annotations

import logging
import time

import httpx
from fastapi.responses import Response

from dragoman.errors import DragomanError
from dragoman.metrics import RouterMetrics
from dragoman.router.backends import Backend, Pair, Pool

log = logging.getLogger(__name__)

_HOP_HEADERS = {"content-length", "transfer-encoding", "connection", "keep-alive"}


class BackendUnreachable(DragomanError):
    status_code = 502
    code = "backend_unreachable"


class BackendTimeout(DragomanError):
    status_code = 504
    code = "backend_timeout"


async def _send(
    client: httpx.AsyncClient, pool: Pool, b: Backend, body: bytes, metrics: RouterMetrics
) -> httpx.Response:
    b.outstanding += 1
    metrics.outstanding.labels(b.name).set(b.outstanding)
    started = time.perf_counter()
    try:
        r = await client.post(
            f"{b.url}/v1/translate", content=body, headers={"content-type": "application/json"}
        )
    except httpx.TimeoutException:
        metrics.errors.labels(b.name, "timeout").inc()
        pool.record_failure(b)
        raise
    except httpx.TransportError:
        metrics.errors.labels(b.name, "connect").inc()
        pool.eject(b)  # passive ejection: out until its checks pass again
        metrics.healthy.labels(b.name).set(0)
        raise
    finally:
        b.outstanding -= 1
        metrics.outstanding.labels(b.name).set(b.outstanding)
    metrics.upstream.labels(b.name, str(r.status_code)).inc()
    metrics.upstream_latency.labels(b.name).observe(time.perf_counter() - started)
    if r.status_code >= 500:
        metrics.errors.labels(b.name, f"http_{r.status_code}").inc()
        if pool.record_failure(b):
            metrics.healthy.labels(b.name).set(0)
    else:
        pool.record_success(b, from_check=False)
    return r


async def forward(
    client: httpx.AsyncClient, pool: Pool, pair: Pair, body: bytes, metrics: RouterMetrics
) -> Response:
    tried: set[str] = set()
    for attempt in range(2):
        backend = pool.pick(pair, exclude=tried)
        tried.add(backend.name)
        try:
            r = await _send(client, pool, backend, body, metrics)
        except httpx.TimeoutException as exc:
            raise BackendTimeout(f"backend {backend.name} did not answer in time") from exc
        except httpx.TransportError as exc:
            if attempt == 0:
                metrics.retries.inc()
                log.warning("backend %s unreachable (%s); retrying elsewhere", backend.name, exc)
                continue
            raise BackendUnreachable(f"backend {backend.name} could not be reached") from exc
        if r.status_code == 503 and attempt == 0:
            metrics.retries.inc()
            continue
        headers = {k: v for k, v in r.headers.items() if k.lower() not in _HOP_HEADERS}
        headers["x-dragoman-backend"] = backend.name
        return Response(r.content, status_code=r.status_code, headers=headers)
    raise AssertionError("unreachable")  # pragma: no cover
