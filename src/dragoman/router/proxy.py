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
from starlette.types import Receive, Scope, Send

from dragoman.api.errors import ERROR_HEADER
from dragoman.errors import DragomanError, Rejected
from dragoman.metrics import RouterMetrics
from dragoman.router.backends import Backend, BackendsBusy, NoHealthyBackend, Pool, Want

log = logging.getLogger(__name__)

# Not relayed: hop-by-hop headers, the request id (the proxy's edge sets its own, the same) and
# the proxy's own server's Date and Server.
_HOP_HEADERS = {
    "content-length",
    "transfer-encoding",
    "connection",
    "keep-alive",
    "upgrade",
    "trailer",
    "te",
    "proxy-authenticate",
    "proxy-authorization",
    "x-request-id",
    "date",
    "server",
}
# Headers of the client's request that the backend needs to see.
FORWARDED = ("content-type", "authorization", "x-request-id", "x-request-timeout", "accept")
# A backend answering these is alive but cannot take the request now: try another.
_SATURATED = (429, 503)
# ...unless the refusal is the client's own (its key's rate or quota): the same on every backend.
_THE_CLIENTS = {"rate_limited", "quota_exceeded"}
# A backend answering these failed this request; another may not (the work is idempotent).
_FAILED = (500, 502)
# 503 codes that mean the backend is going away: out of the pool until its checks pass.
_GONE = {"draining", "engine_dead"}
# 404 codes that mean another backend may have it: a model, a document job.
_ELSEWHERE = {"model_not_found", "document_not_found"}
_GRACE = 1.0
"""Seconds the proxy waits past a client's deadline (X-Request-Timeout) for the backend's own
504 before answering it itself: a hung backend holds a request no longer than its client."""


class BackendUnreachable(DragomanError):
    status_code = 502
    code = "backend_unreachable"


class BackendTimeout(DragomanError):
    status_code = 504
    code = "backend_timeout"


class DeadlinePassed(DragomanError):
    status_code = 504
    code = "deadline_exceeded"


class ProxyBusy(Rejected):
    """Every connection the proxy keeps to its backends is in use (--max-connections)."""

    status_code = 503
    code = "proxy_busy"


def _error_code(r: httpx.Response) -> str | None:
    """The code of a dragoman refusal, in any surface's shape (the header every error
    carries), else a native or OpenAI body's."""
    if code := r.headers.get(ERROR_HEADER):
        return code
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
    path: str  # percent-encoded, without its query string (what a log line may name)
    query: str
    body: bytes
    headers: dict[bytes, bytes]  # as the client sent them (a value may hold any byte)
    deadline: float | None = None  # the client's X-Request-Timeout, seconds

    @property
    def target(self) -> str:
        """The path with its query string: what the backend is sent, never logged (a
        LibreTranslate client's `api_key=` may be in it)."""
        return f"{self.path}?{self.query}" if self.query else self.path


class _Slot:
    """A backend's place taken by one request (its `outstanding`), given back once: when the
    answer is read, or, for a stream, when the relay closes it."""

    def __init__(self, b: Backend, metrics: RouterMetrics) -> None:
        self.b, self.metrics, self.held = b, metrics, True
        b.outstanding += 1
        metrics.outstanding.labels(b.name).set(b.outstanding)

    def release(self) -> None:
        if self.held:
            self.held = False
            self.b.outstanding -= 1
            self.metrics.outstanding.labels(self.b.name).set(self.b.outstanding)


def _timeout(client: httpx.AsyncClient, out: Outgoing) -> httpx.Timeout:
    t = client.timeout
    if out.deadline is None or out.deadline + _GRACE >= (t.read or float("inf")):
        return t
    return httpx.Timeout(out.deadline + _GRACE, connect=t.connect, pool=t.pool)


async def send(
    client: httpx.AsyncClient, pool: Pool, b: Backend, out: Outgoing, metrics: RouterMetrics
) -> tuple[httpx.Response, _Slot]:
    """The backend's answer; a stream is left open (its slot held) for the relay, anything
    else is read. Raises ProxyBusy when the proxy had no connection free, DeadlinePassed when
    the client's deadline passed (neither is the backend's fault), httpx's errors else."""
    slot = _Slot(b, metrics)
    started = time.perf_counter()
    timeout = _timeout(client, out)
    r: httpx.Response | None = None
    try:
        request = client.build_request(
            out.method,
            f"{b.url}{out.target}",
            content=out.body,
            headers=out.headers,
            timeout=timeout,
        )
        r = await client.send(request, stream=True)
        if not _streamed(r) or r.status_code != 200:
            try:
                await r.aread()
            finally:
                await r.aclose()
    except httpx.PoolTimeout as exc:
        raise ProxyBusy(
            "the proxy's connections to its backends are all in use; retry shortly",
            retry_after=1,
        ) from exc
    except httpx.ConnectTimeout:
        metrics.errors.labels(b.name, "connect").inc()
        if pool.record_failure(b):
            metrics.healthy.labels(b.name).set(0)
        raise
    except httpx.TimeoutException as exc:
        if timeout is not client.timeout:  # the client's deadline, not the backend's fault
            raise DeadlinePassed(f"the request's deadline of {out.deadline:g} s passed") from exc
        metrics.errors.labels(b.name, "timeout").inc()
        if pool.record_failure(b):
            metrics.healthy.labels(b.name).set(0)
        raise
    except httpx.TransportError:
        metrics.errors.labels(b.name, "connect").inc()
        pool.eject(b)  # passive ejection: out until its checks pass again
        metrics.healthy.labels(b.name).set(0)
        raise
    finally:
        if r is None or r.is_closed:
            slot.release()
    metrics.upstream.labels(b.name, str(r.status_code)).inc()
    metrics.upstream_latency.labels(b.name).observe(time.perf_counter() - started)
    return r, slot


def _judge(pool: Pool, b: Backend, r: httpx.Response, metrics: RouterMetrics) -> None:
    """What an answer says of the backend's health. A refusal is no failure, nor a 504 of
    the client's own deadline; a 500 or 502 is charged by `forward` once another backend has
    answered the same request (else the request, not the backend, is the likely cause)."""
    if r.status_code == 429:
        return  # alive and answering, only full (or the client's key is): no mark either way
    if r.status_code == 503:
        if _error_code(r) in _GONE:
            pool.eject(b)
            metrics.healthy.labels(b.name).set(0)
        return
    if r.status_code >= 500:
        metrics.errors.labels(b.name, f"http_{r.status_code}").inc()
        if r.status_code not in _FAILED and _error_code(r) != "deadline_exceeded":
            _charge(pool, b, metrics)
        return
    pool.record_success(b, from_check=False)


def _charge(pool: Pool, b: Backend, metrics: RouterMetrics) -> None:
    if pool.record_failure(b):
        metrics.healthy.labels(b.name).set(0)


class _Relayed(StreamingResponse):
    """A backend's stream relayed as it comes. Its response is closed and its place given back
    however the relay ends: Starlette runs a `background` task only after a stream that ended
    normally, and one the backend broke off (or a read past the client's deadline) kept the
    place for good."""

    def __init__(self, r: httpx.Response, slot: _Slot | None, headers: dict[str, str]) -> None:
        super().__init__(r.aiter_raw(), r.status_code, headers)
        self._upstream, self._slot = r, slot

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            await _close(self._upstream, self._slot)


def relay(backend: Backend, r: httpx.Response, slot: _Slot | None = None) -> Response:
    headers = {k: v for k, v in r.headers.items() if k.lower() not in _HOP_HEADERS}
    headers["x-dragoman-backend"] = backend.name
    if not r.is_closed:  # a stream: relayed as it comes; its slot held until it is closed
        return _Relayed(r, slot, headers)
    headers.pop("content-encoding", None)  # r.content is the decoded body
    return Response(r.content, status_code=r.status_code, headers=headers)


async def _close(r: httpx.Response, slot: _Slot | None) -> None:
    try:
        await r.aclose()
    finally:
        if slot is not None:
            slot.release()


def _retry_after(r: httpx.Response) -> float:
    try:
        return float(r.headers.get("retry-after", "inf"))
    except ValueError:
        return float("inf")


def outgoing(
    method: str, path: str, query: str, body: bytes, client_headers: dict[str, str]
) -> Outgoing:
    """The request to relay. Header values go as the bytes the client sent (the server reads
    them as Latin-1): httpx would refuse a str holding a byte past ASCII."""
    headers = {
        k.encode("latin-1"): v.encode("latin-1", "replace")
        for k, v in client_headers.items()
        if k.lower() in FORWARDED
    }
    headers[b"accept-encoding"] = b"identity"  # bodies are relayed as they come
    try:
        deadline = float(client_headers.get("x-request-timeout", ""))
    except ValueError:
        deadline = None
    if deadline is not None and not 0 < deadline < float("inf"):
        deadline = None  # the backend answers a bad value in its surface's shape
    return Outgoing(method, path, query, body, headers, deadline)


async def forward(
    client: httpx.AsyncClient,
    pool: Pool,
    want: Want,
    out: Outgoing,
    metrics: RouterMetrics,
    widest: bool = False,
) -> Response:
    """`widest`: prefer the backends serving the most source languages (a detected source is
    detected among the languages of the backend it reaches)."""
    tried: set[str] = set()
    refused: list[tuple[Backend, httpx.Response]] = []
    failed: list[tuple[Backend, httpx.Response]] = []
    unreachable: str | None = None
    none_left: DragomanError | None = None
    while True:
        try:
            backend = pool.pick(want, exclude=tried, widest=widest)
        except (NoHealthyBackend, BackendsBusy) as exc:
            if not tried:
                raise
            none_left = exc
            break  # every candidate was tried
        if tried:
            metrics.retries.inc()
        tried.add(backend.name)
        try:
            r, slot = await send(client, pool, backend, out, metrics)
        except httpx.ConnectTimeout:  # nothing was sent: another backend may take it
            log.warning("backend %s did not accept a connection; trying another", backend.name)
            unreachable = backend.name
            continue
        except httpx.TimeoutException as exc:
            raise BackendTimeout(f"backend {backend.name} did not answer in time") from exc
        except httpx.TransportError as exc:
            log.warning("backend %s unreachable (%s); trying another", backend.name, exc)
            unreachable = backend.name
            continue
        _judge(pool, backend, r, metrics)
        if failed and r.status_code < 500 and r.status_code != 429:
            _charge(pool, failed[0][0], metrics)  # another backend answered what it failed
        code = _error_code(r) if r.is_closed else None
        if r.status_code in _SATURATED and code not in _THE_CLIENTS:
            refused.append((backend, r))  # full or going away
            continue
        if code in _ELSEWHERE:
            refused.append((backend, r))  # serving another model; a job another backend holds
            continue
        if r.status_code in _FAILED and r.is_closed:
            log.warning(
                "backend %s failed the request (%d)%s",
                backend.name,
                r.status_code,
                "; trying another" if not failed else "",
            )
            failed.append((backend, r))
            if len(failed) < 2:
                continue
            break  # failed twice: the request, not one backend, is the likely cause
        return relay(backend, r, slot)
    full = [(b, r) for b, r in refused if r.status_code == 429]
    if full:
        return relay(*min(full, key=lambda br: _retry_after(br[1])))
    if refused:
        return relay(*refused[-1])
    if failed:
        return relay(*failed[-1])
    if none_left is not None and not isinstance(none_left, NoHealthyBackend):
        raise none_left  # the others were busy
    raise BackendUnreachable(f"backend {unreachable} could not be reached")
