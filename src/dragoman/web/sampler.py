"""A once-a-second sampler of a registry, keeping the last few minutes as points.

Rates are computed here, server-side, between consecutive samples, and percentiles over the
last `WINDOW` samples, so every viewer of the dashboard sees the same numbers and a viewer that
opens it late still gets the history. A sample is one pass over the registries and a few
/proc reads: cheap enough to run all the time."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import deque
from types import TracebackType
from typing import Any

import psutil

from dragoman.web._samples import Raw

log = logging.getLogger(__name__)

INTERVAL = 1.0  # seconds between samples
KEEP = 300  # points kept: five minutes
WINDOW = 10  # samples the percentiles look back over

Point = dict[str, Any]


def _idle(times: Any) -> float:
    return float(times.idle + getattr(times, "iowait", 0.0))


class CpuMeter:
    """CPU use between two readings: the machine's, and this process with its children (the
    engine's processes), both in percent of all cores."""

    def __init__(self) -> None:
        self._root = psutil.Process()
        self._cores = psutil.cpu_count() or 1
        self._machine = psutil.cpu_times()
        self._used: dict[int, float] = {}
        self._at = time.monotonic()
        self._tree()

    def _tree(self) -> float:
        """CPU seconds the tree used since the last call (a process new since then counts
        from its start)."""
        try:
            procs = [self._root, *self._root.children(recursive=True)]
        except psutil.Error:
            procs = [self._root]
        spent, used = 0.0, {}
        for p in procs:
            try:
                t = p.cpu_times()
            except psutil.Error:
                continue
            used[p.pid] = t.user + t.system
            spent += used[p.pid] - self._used.get(p.pid, 0.0)
        self._used = used
        return spent

    def read(self) -> dict[str, float]:
        now, machine = time.monotonic(), psutil.cpu_times()
        elapsed, self._at = now - self._at, now
        all_time = sum(machine) - sum(self._machine)
        idle = _idle(machine) - _idle(self._machine)
        busy = 1.0 - idle / all_time if all_time > 0 else 0.0
        self._machine = machine
        tree = self._tree() / (elapsed * self._cores) if elapsed > 0 else 0.0
        return {
            "cpu_percent": round(100 * min(1.0, max(0.0, busy)), 1),
            "process_cpu_percent": round(100 * min(1.0, max(0.0, tree)), 1),
        }


class Sampler:
    """Subclasses say what to read and how a point is made of two readings; this keeps time,
    the history and the background task (entered by the app's lifespan)."""

    interval = INTERVAL

    def __init__(self) -> None:
        self.points: deque[Point] = deque(maxlen=KEEP)
        self._raws: deque[tuple[float, Raw]] = deque(maxlen=WINDOW)
        self._cpu: CpuMeter | None = None
        self._task: asyncio.Task[None] | None = None

    def read(self) -> Raw:
        raise NotImplementedError

    def point(self, now: Raw, previous: Raw, window_start: Raw, seconds: float) -> Point:
        raise NotImplementedError

    def header(self) -> dict[str, Any]:
        raise NotImplementedError

    def sample(self) -> None:
        at, raw = time.monotonic(), self.read()
        if self._cpu is None:
            self._cpu = CpuMeter()
        elif self._raws:
            previous_at, previous = self._raws[-1]
            made = self.point(raw, previous, self._raws[0][1], at - previous_at)
            self.points.append({"t": round(time.time(), 3), **made, **self._cpu.read()})
        self._raws.append((at, raw))

    def answer(self, since: float | None) -> dict[str, Any]:
        kept = list(self.points)  # one copy under the GIL: the sampler thread appends
        points = [p for p in kept if since is None or p["t"] > since]
        return {
            **self.header(),
            "interval_seconds": self.interval,
            "window_seconds": WINDOW * self.interval,
            "points": points,
        }

    async def _run(self) -> None:
        while True:
            await asyncio.sleep(self.interval)
            try:
                # Off the event loop: the /proc reads take a millisecond or two.
                await asyncio.to_thread(self.sample)
            except Exception:  # one bad sample must not end the dashboard's history
                log.exception("stats sample failed")

    async def __aenter__(self) -> Sampler:
        self.sample()
        self._task = asyncio.create_task(self._run(), name="stats-sampler")
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
