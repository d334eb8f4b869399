"""The ingress's retry policy against Ray's real exception types (no cluster)."""

from __future__ import annotations

import random
from collections.abc import Awaitable, Callable

import pytest

pytest.importorskip("ray.serve")

from ray.exceptions import ActorDiedError, RayTaskError
from ray.serve.exceptions import BackPressureError

from dragoman.deploy.ray.retry import ModelUnavailable, RetryPolicy, with_retries
from dragoman.errors import EngineDead, Overloaded, TextTooLong

FAST = RetryPolicy(attempts=4, base=0.001)


def failing(
    *errors: BaseException, answer: str = "ok"
) -> tuple[Callable[[], Awaitable[str]], list[int]]:
    """A call that raises `errors` in turn, then answers; and its call count."""
    calls = [0]

    async def call() -> str:
        calls[0] += 1
        if calls[0] <= len(errors):
            raise errors[calls[0] - 1]
        return answer

    return call, calls


def wrapped(exc: BaseException) -> RayTaskError:
    """What a handle raises for an exception inside the replica."""
    return RayTaskError("translate", "Traceback: ...", exc).as_instanceof_cause()


async def test_a_dead_replica_is_retried_until_one_answers() -> None:
    call, calls = failing(ActorDiedError(), ActorDiedError())
    kinds: list[str] = []
    assert await with_retries(call, "m", FAST, on_retry=kinds.append) == "ok"
    assert calls[0] == 3
    assert kinds == ["transport", "transport"]


async def test_a_dead_engine_in_a_replica_is_a_lost_replica_not_a_dead_ingress() -> None:
    call, calls = failing(wrapped(EngineDead("gone")))
    assert await with_retries(call, "m", FAST) == "ok"
    assert calls[0] == 2


async def test_a_replicas_own_error_is_raised_as_itself_untried_again() -> None:
    call, calls = failing(wrapped(TextTooLong("too long", retry_after=None)))
    with pytest.raises(TextTooLong) as info:
        await with_retries(call, "m", FAST)
    assert type(info.value) is TextTooLong and info.value.status_code == 413
    assert calls[0] == 1


async def test_full_queues_back_off_then_answer_429() -> None:
    call, calls = failing(*[BackPressureError(10, 10)] * 4)
    with pytest.raises(Overloaded) as info:
        await with_retries(call, "m", FAST)
    assert calls[0] == 4
    assert info.value.status_code == 429 and info.value.retry_after == 1


async def test_replicas_that_keep_dying_answer_503_with_retry_after() -> None:
    call, calls = failing(*[ActorDiedError()] * 4)
    with pytest.raises(ModelUnavailable) as info:
        await with_retries(call, "model 'x'", FAST)
    assert calls[0] == 4
    assert info.value.status_code == 503 and info.value.code == "model_unavailable"
    assert info.value.headers() == {"Retry-After": "5"}


def test_backoff_grows_by_half_within_jitter_and_cap() -> None:
    policy = RetryPolicy()
    rng = random.Random(0)
    for n in range(12):
        want = min(policy.cap, 0.05 * 1.5**n)
        assert want * 0.8 <= policy.backoff(n, rng) <= want * 1.2
