"""Per-key limits: requests and characters per minute, over a sliding minute (exact: the Nth
request of a minute passes, the N+1th is refused), with a Retry-After saying when enough of
the minute's earlier use will have aged out; and characters per UTC day (a quota, as DeepL's:
refused with `quota_exceeded` until midnight UTC). Keys are few (the operator's), and each
keeps at most a minute of entries and one day counter. Usage is also counted for the anonymous
caller when keys are off, so /v2/usage reports the server's day. A charge may be a reservation
(a chat completion's most tokens, before it runs), settled down to what was spent once known."""

from __future__ import annotations

import datetime as dt
import math
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

from dragoman.errors import QuotaExceeded, RateLimited, TextTooLong
from dragoman.service.keys import Caller

WINDOW = 60.0


class _Use:
    """One charge in a key's minute: when, and its characters (lowered when settled)."""

    __slots__ = ("at", "chars", "live")

    def __init__(self, at: float, chars: int) -> None:
        self.at = at
        self.chars = chars
        self.live = True  # still in the key's minute


@dataclass
class Charge:
    """What `KeyLimits.charge` counted, for `KeyLimits.settle`."""

    caller: Caller
    chars: int
    day: dt.date
    use: _Use | None


class KeyLimits:
    def __init__(
        self,
        requests_per_minute: int,
        chars_per_minute: int,
        chars_per_day: int = 0,
        clock: Callable[[], float] = time.monotonic,
        now: Callable[[], dt.datetime] = lambda: dt.datetime.now(dt.UTC),
    ) -> None:
        self.rpm = requests_per_minute
        self.cpm = chars_per_minute
        self.cpd = chars_per_day
        self._clock = clock
        self._now = now
        self._use: dict[str, deque[_Use]] = {}
        self._chars: dict[str, int] = {}  # the characters in each key's window, kept current
        self._day: dict[str | None, tuple[dt.date, int]] = {}

    def day_usage(self, caller: Caller) -> int:
        """Characters the caller sent today (UTC)."""
        day, used = self._day.get(caller.key, (None, 0))
        return used if day == self._now().date() else 0

    def _check_day(self, caller: Caller, chars: int) -> None:
        if caller.key is None or not self.cpd:
            return
        if chars > self.cpd:  # never within a day: no waiting helps (as the minute's limit)
            raise TextTooLong(
                f"the request has {chars} characters; this key may send {self.cpd} a day"
            )
        used = self.day_usage(caller)
        if used + chars > self.cpd:
            now = self._now()
            midnight = dt.datetime.combine(now.date() + dt.timedelta(days=1), dt.time(), dt.UTC)
            raise QuotaExceeded(
                f"this key's quota of {self.cpd} characters a day is used up ({used} used, "
                f"{chars} asked); it resets at 00:00 UTC",
                _retry((midnight - now).total_seconds()),
            )

    def room(self, caller: Caller) -> int | None:
        """The most characters one request of the caller's may be charged: what is left of
        the day's quota, at most the minute's whole limit (the minute's own use is a wait, not
        a smaller answer: `check` says when); None when no character limit applies."""
        if caller.key is None:
            return None
        bounds = [self.cpm] if self.cpm else []
        if self.cpd:
            bounds.append(max(0, self.cpd - self.day_usage(caller)))
        return min(bounds) if bounds else None

    def _window(self, key: str) -> deque[_Use]:
        use = self._use.setdefault(key, deque())
        horizon = self._clock() - WINDOW
        while use and use[0].at <= horizon:
            gone = use.popleft()
            gone.live = False
            self._chars[key] -= gone.chars
        return use

    def check(self, caller: Caller, chars: int) -> None:
        """Raise QuotaExceeded past the day's characters, RateLimited (429) if this request
        would pass either limit within the minute."""
        self._check_day(caller, chars)
        if caller.key is None or not (self.rpm or self.cpm):
            return
        if self.cpm and chars > self.cpm:
            raise TextTooLong(
                f"the request has {chars} characters; this key may send {self.cpm} a minute"
            )
        use = self._window(caller.key)
        now = self._clock()
        # Each limit's wait; Retry-After is the longer (the first alone sent a client honouring
        # it back while the other limit still held, to be refused again).
        refusals: list[tuple[str, float]] = []
        if self.rpm and len(use) >= self.rpm:
            # The oldest requests must age out until one more fits.
            at = use[len(use) - self.rpm].at
            message = f"this key's limit of {self.rpm} requests a minute is used up"
            refusals.append((message, at + WINDOW - now))
        used = self._chars.get(caller.key, 0)  # a running total: no sum per request
        if self.cpm and used + chars > self.cpm:
            freed, at = 0, now
            for u in use:
                freed += u.chars
                at = u.at
                if used - freed + chars <= self.cpm:
                    break
            message = (
                f"this key's limit of {self.cpm} characters a minute is used up "
                f"({used} used, {chars} asked)"
            )
            refusals.append((message, at + WINDOW - now))
        if refusals:
            raise RateLimited(refusals[0][0], _retry(max(wait for _, wait in refusals)))

    def charge(self, caller: Caller, chars: int) -> Charge:
        today = self._now().date()
        self._day[caller.key] = (today, self.day_usage(caller) + chars)
        if caller.key is None or not (self.rpm or self.cpm):
            return Charge(caller, chars, today, None)
        use = _Use(self._clock(), chars)
        self._window(caller.key).append(use)
        self._chars[caller.key] = self._chars.get(caller.key, 0) + chars
        return Charge(caller, chars, today, use)

    def settle(self, charge: Charge, spent: int) -> None:
        """Lower a charge made in advance (a reservation) to the characters `spent`: the rest
        is given back to the day (if it is still the day charged) and to the minute (if the
        charge is still in it). Never raises it: what was reserved is the most it costs."""
        back = charge.chars - max(0, spent)
        if back <= 0:
            return
        charge.chars -= back
        key = charge.caller.key
        day, used = self._day.get(key, (None, 0))
        if day == charge.day:
            self._day[key] = (day, max(0, used - back))
        if charge.use is not None and key is not None:
            self._window(key)  # a charge that aged out of the minute counts there no more
            if charge.use.live:
                charge.use.chars -= back
                self._chars[key] -= back


def _retry(seconds: float) -> int:
    return max(1, math.ceil(seconds))
