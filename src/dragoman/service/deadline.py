"""Per-request deadlines: the server's `--request-timeout` is the default and the most a client
may ask for; a client asks for less with `X-Request-Timeout` or a body field. When it passes,
the request's engine requests are cancelled (which aborts them in vLLM)."""

from __future__ import annotations

import time
from dataclasses import dataclass

from dragoman.errors import InvalidRequest


@dataclass(frozen=True)
class Deadline:
    seconds: float
    """The time granted, counted from `started`."""

    started: float
    """time.monotonic() when the request arrived."""

    @classmethod
    def start(cls, server_default: float, started: float | None = None) -> Deadline:
        return cls(server_default, time.monotonic() if started is None else started)

    def tighten(self, seconds: float | None) -> Deadline:
        """A client's own timeout, when shorter than what is granted already."""
        if seconds is None or seconds >= self.seconds:
            return self
        return Deadline(seconds, self.started)

    def remaining(self, now: float | None = None) -> float:
        return self.started + self.seconds - (time.monotonic() if now is None else now)


def parse_timeout(value: str | None, source: str) -> float | None:
    """A timeout in seconds from a header: a positive number, or None when absent."""
    if value is None:
        return None
    try:
        seconds = float(value)
    except ValueError:
        seconds = -1.0
    if not seconds > 0 or seconds == float("inf"):
        raise InvalidRequest(f"{source}: must be a positive number of seconds, got {value!r}")
    return seconds
