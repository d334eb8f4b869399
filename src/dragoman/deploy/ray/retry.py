"""Retries of one call to a model deployment, production-stack's policy (its
`services/request_service/retry.py`): a transport failure (the replica died or is gone) is
retried at once, since Serve's router drops a dead replica and picks another; a full queue
(BackPressureError) backs off 50 ms x 1.5^n with +-20% jitter. Serve itself retries nothing
that was in flight on a replica that died (ray#52365), so the ingress does: a translation is
idempotent. Bounded in tries and in the request's own deadline."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

from dragoman.errors import DragomanError, EngineDead, EngineNotReady, Overloaded

T = TypeVar("T")


class ModelUnavailable(EngineNotReady):
    """A known pair whose model has no live replica right now: 503 with Retry-After (never
    404, which clients take as final: production-stack#1003)."""

    code = "model_unavailable"


@dataclass(frozen=True)
class RetryPolicy:
    attempts: int = 6
    base: float = 0.05
    factor: float = 1.5
    cap: float = 2.0
    jitter: float = 0.2

    def backoff(self, n: int, rng: random.Random) -> float:
        """Wait before the (n+1)-th retry of a refused call."""
        delay = min(self.cap, self.base * self.factor**n)
        return delay * (1 + rng.uniform(-self.jitter, self.jitter))


def _classify(exc: BaseException) -> tuple[str, BaseException]:
    """("transport" | "busy" | "final", the error to act on). A replica's own errors come
    wrapped in RayTaskError; their cause is what the replica raised."""
    from ray.exceptions import RayActorError, RayTaskError
    from ray.serve.exceptions import BackPressureError, ReplicaUnavailableError

    cause: BaseException = exc
    if isinstance(exc, RayTaskError) and exc.cause is not None:
        cause = exc.cause
    if isinstance(cause, BackPressureError):
        return "busy", cause
    if isinstance(cause, RayActorError | ReplicaUnavailableError):
        return "transport", cause
    if isinstance(cause, EngineDead):
        # That replica's engine is gone; Serve's health check will replace the replica. For
        # the ingress it is one replica lost, not its own engine: another one can answer.
        return "transport", cause
    return "final", cause


async def with_retries(
    call: Callable[[], Awaitable[T]],
    what: str,
    policy: RetryPolicy,
    rng: random.Random | None = None,
    on_retry: Callable[[str], None] | None = None,
) -> T:
    """`call()` until it answers; a replica's DragomanError is raised as itself (TextTooLong
    stays a 413); exhausted retries are 503 `model_unavailable` or 429 `overloaded`."""
    from ray.serve.exceptions import DeploymentUnavailableError

    rng = rng or random.Random()
    busy = 0
    last = "transport"
    for attempt in range(policy.attempts):
        try:
            return await call()
        except asyncio.CancelledError:
            raise
        except DeploymentUnavailableError as exc:
            raise ModelUnavailable(f"{what}: failed to deploy", retry_after=5) from exc
        except Exception as exc:
            kind, cause = _classify(exc)
            if kind == "final":
                if isinstance(cause, DragomanError):
                    raise cause from None
                raise
            last = kind
            if on_retry is not None:
                on_retry(kind)
            if attempt == policy.attempts - 1:
                break
            if kind == "busy":
                await asyncio.sleep(policy.backoff(busy, rng))
                busy += 1
            elif attempt > 0:
                # The first retry of a lost replica goes out at once; later ones back off, so
                # a cluster losing replicas one after another is not hammered.
                await asyncio.sleep(policy.backoff(attempt - 1, rng))
    if last == "busy":
        raise Overloaded(f"{what}: every replica's queue is full; retry shortly", retry_after=1)
    raise ModelUnavailable(f"{what}: no replica answered; retry shortly", retry_after=5)
