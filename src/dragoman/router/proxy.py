"""Forward one request to the best backend: any surface's translation (native, LibreTranslate,
DeepL), chat, or a read. A backend that cannot be reached, or answers 429 (at its admission
limit) or 503 (draining, loading, dead, or its queue too long for the deadline), is passed over
for the next best (translation is idempotent, and a refused request did no work); so is one that
failed with 500 or 502 (its engine died under the request, or a fault of that backend's own).
Only when every candidate is saturated does the client get the 429 (the soonest Retry-After) or
503, and only when every one failed, the last failure.
Bodies and query strings pass through untouched, with the client's content type, key, request
id and deadline headers; a streamed answer (chat's server-sent events) is relayed as it comes."""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass

import httpx
from fastapi.responses import Response, StreamingResponse
from starlette.background import BackgroundTask

from dragoman.errors import DragomanError
from dragoman.metrics import RouterMetrics
from dragoman.router.backends import Backend, BackendsBusy, NoHealthyBackend, Pool, Want

log = logging.getLogger(__name__)

# Not relayed: hop-by-hop headers, and the request id (the proxy's edge sets its own, the same).
_HOP_HEADERS = {"content-length", "transfer-encoding", "connection", "keep-alive", "x-request-id"}
# Headers of the client's request that the backend needs to see.
FORWARDED = ("content-type", "authorization", "x-request-id", "x-request-timeout", "accept")
# A backend answering these is alive but cannot take the request now: try another.
_SATURATED = (429, 503)
# A backend answering these failed this request; another may not (the work is idempotent).
_FAILED = (500, 502)
# 503 codes that mean the backend is going away: out of the pool until its checks pass.
_GONE = {"draining", "engine_dead"}


class BackendUnreachable(DragomanError):
    status_code = 502
    code = "backend_unreachable"


class BackendTimeout(DragomanError):
    status_code = 504
    code = "backend_timeout"


def _error_code(r: httpx.Response) -> str | None:
    """The native or OpenAI error code of a refusal (other shapes carry none)."""
    try:
        code = r.json()["error"]["code"]
    except (ValueError, KeyError, TypeError):
        return None
    return code if isinstance(code, str) else None


def _streamed(r: httpx.Response) -> bool:
    return r.headers.get("content-type", "").startswith("text/event-stream")


@dataclass(frozen=True)
class Outgoing:
    """The client's request as the backends get it."""

    method: str
    path: str  # with its query string
    body: bytes
    headers: dict[str, str]


async def _send(
    client: httpx.AsyncClient,
    pool: Pool,
    b: Backend,
    out: Outgoing,
    metrics: RouterMetrics,
) -> httpx.Response:
    """The backend's answer; a stream is left open for the relay, anything else is read."""
    b.outstanding += 1
    metrics.outstanding.labels(b.name).set(b.outstanding)
    started = time.perf_counter()
    request = client.build_request(
        out.method, f"{b.url}{out.path}", content=out.body, headers=out.headers
    )
    try:
        r = await client.send(request, stream=True)
        if not _streamed(r) or r.status_code != 200:
            try:
                await r.aread()
            finally:
                await r.aclose()
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
    if r.status_code == 429:
        pass  # alive and answering, only full: no mark either way
    elif r.status_code == 503:
        if _error_code(r) in _GONE:
            pool.eject(b)
            metrics.healthy.labels(b.name).set(0)
    elif r.status_code >= 500:
        metrics.errors.labels(b.name, f"http_{r.status_code}").inc()
        if pool.record_failure(b):
            metrics.healthy.labels(b.name).set(0)
    else:
        pool.record_success(b, from_check=False)
    return r


def _relay(backend: Backend, r: httpx.Response) -> Response:
    headers = {k: v for k, v in r.headers.items() if k.lower() not in _HOP_HEADERS}
    headers["x-dragoman-backend"] = backend.name
    if not r.is_closed:  # a stream: relayed as it comes, closed when done or abandoned
        return StreamingResponse(
            r.aiter_raw(), r.status_code, headers, background=BackgroundTask(r.aclose)
        )
    return Response(r.content, status_code=r.status_code, headers=headers)


def _retry_after(r: httpx.Response) -> float:
    try:
        return float(r.headers.get("retry-after", "inf"))
    except ValueError:
        return float("inf")


def outgoing(
    method: str, path: str, query: str, body: bytes, client_headers: dict[str, str]
) -> Outgoing:
    headers = {k: v for k, v in client_headers.items() if k.lower() in FORWARDED}
    return Outgoing(method, f"{path}?{query}" if query else path, body, headers)


async def forward(
    client: httpx.AsyncClient,
    pool: Pool,
    want: Want,
    out: Outgoing,
    metrics: RouterMetrics,
) -> Response:
    tried: set[str] = set()
    refused: list[tuple[Backend, httpx.Response]] = []
    failed: list[tuple[Backend, httpx.Response]] = []
    unreachable: str | None = None
    while True:
        try:
            backend = pool.pick(want, exclude=tried)
        except (NoHealthyBackend, BackendsBusy):
            if not tried:
                raise
            break  # every candidate was tried
        if tried:
            metrics.retries.inc()
        tried.add(backend.name)
        try:
            r = await _send(client, pool, backend, out, metrics)
        except httpx.TimeoutException as exc:
            raise BackendTimeout(f"backend {backend.name} did not answer in time") from exc
        except httpx.TransportError as exc:
            log.warning("backend %s unreachable (%s); trying another", backend.name, exc)
            unreachable = backend.name
            continue
        if r.status_code in _SATURATED or (r.is_closed and _error_code(r) == "model_not_found"):
            refused.append((backend, r))  # full, going away, or serving another model
            continue
        if r.status_code in _FAILED and r.is_closed:
            log.warning(
                "backend %s failed the request (%d); trying another", backend.name, r.status_code
            )
            failed.append((backend, r))
            continue
        return _relay(backend, r)
    full = [(b, r) for b, r in refused if r.status_code == 429]
    if full:
        return _relay(*min(full, key=lambda br: _retry_after(br[1])))
    if refused:
        return _relay(*refused[-1])
    if failed:
        return _relay(*failed[-1])
    raise BackendUnreachable(f"backend {unreachable} could not be reached")
