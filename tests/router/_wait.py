"""Waiting on a state with a deadline: the test fails there, saying what it waited for and
what it last saw, where a poll that ran out would carry on as if the state had come."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

import httpx
import pytest

T = TypeVar("T")


async def until(
    probe: Callable[[], Awaitable[T]],
    done: Callable[[T], bool],
    what: str,
    within: float = 10.0,
    interval: float = 0.05,
) -> T:
    """`probe()` until `done` holds for what it returns (that value returned), or fail."""
    deadline = time.monotonic() + within
    while True:
        got = await probe()
        if done(got):
            return got
        if time.monotonic() >= deadline:
            pytest.fail(f"{what}: not within {within:g} s; last seen: {_shown(got)}")
        await asyncio.sleep(interval)


def until_sync(
    probe: Callable[[], T],
    done: Callable[[T], bool],
    what: str,
    within: float = 10.0,
    interval: float = 0.05,
) -> T:
    """`until` for code outside an event loop."""
    deadline = time.monotonic() + within
    while True:
        got = probe()
        if done(got):
            return got
        if time.monotonic() >= deadline:
            pytest.fail(f"{what}: not within {within:g} s; last seen: {_shown(got)}")
        time.sleep(interval)


def _shown(got: object) -> str:
    if isinstance(got, httpx.Response):
        return f"{got.status_code} {got.text[:500]}"
    return repr(got)
