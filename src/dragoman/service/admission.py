"""Admission control: a bound on admitted work, counted in engine requests (one per text, in
the engine or waiting for it). A request is admitted whole or refused at once with a
`Retry-After` derived from how fast admitted work has been finishing; admitted work is never
dropped. Draining (SIGTERM) refuses everything new and waits for what was admitted.

Refused requests queue up in a virtual line: each is told to come back when the places of
everyone refused before it (and its own) will have drained at the drain rate, so a crowd of
refused clients comes back spread out at about the rate the server can take them, instead of
all at once every second (each refusal costs the server CPU the engine could use).

The drain rate is how fast places free up when the server is full, so it is measured only
while it is: completions per second during the spells in which the engine held as much as it
runs at once (`capacity`, or the bound when lower), over the last `window` seconds of such
spells however long ago (a crowd at an idle server is spread out from its first refusal).
Completions under a lighter load measure how much work came, not how fast the server drains:
one text at a time on an engine that runs 16 at once is a sixteenth of its rate, and a crowd
spread out at it was told to wait up to a minute for a server free within a second. A spell
shorter than a second counts for its own length: stretched to a second it understated a fast
engine's rate several times over. An overstated rate costs little (a client back too soon is
refused again, and the spacing corrects as the spells add up); an understated one leaves
clients waiting on an idle server. Nothing measured yet: a second."""

from __future__ import annotations

import asyncio
import math
import time
from collections import deque
from collections.abc import Callable

from dragoman.errors import DeadlineUnmeetable, Draining, Overloaded, ShutDown

# Retry-After stays within these: at least a second (the header's unit), at most a minute
# (clients such as openai's cap their wait there anyway; a longer guess is mostly noise).
MIN_RETRY, MAX_RETRY = 1, 60
# Completions this close after a full spell ended came in the engine step that ended it.
SAME_STEP = 0.01
# A draining server is going away: behind a balancer a retry soon reaches another server.
DRAIN_RETRY = 5


def _shut_down() -> ShutDown:
    return ShutDown(
        "the server shut down before this request finished; its work was aborted: retry",
        DRAIN_RETRY,
    )


def _clamp_retry(seconds: float) -> int:
    return max(MIN_RETRY, min(MAX_RETRY, math.ceil(seconds)))


class Ticket:
    """`n` admitted engine requests; each frees its place as it finishes. The task waiting
    on its work says so (`waiting_in`), so that a shutdown past its drain can abort the work
    with an answer (`Admission.abort`) rather than leave it to be cut off mid-response."""

    def __init__(self, admission: Admission, n: int) -> None:
        self._admission = admission
        self.held = n
        self.aborted = False
        self._waiter: asyncio.Task[object] | None = None

    def waiting_in(self, task: asyncio.Task[object] | None) -> None:
        """`task` awaits this ticket's work from now on (None: nothing does for now)."""
        self._waiter = task

    def check_aborted(self) -> None:
        """Raise `ShutDown` if the server aborted this work (between two waits)."""
        if self.aborted:
            raise _shut_down()

    def aborted_by(self, cancelled: asyncio.CancelledError) -> ShutDown:
        """What a waiter cancelled by `Admission.abort` raises instead of the cancellation;
        any other cancellation (a deadline, a client gone) is re-raised as it is."""
        task = asyncio.current_task()
        if not self.aborted or task is None or task.uncancel() > 0:
            raise cancelled
        return _shut_down()

    def _abort(self) -> None:
        self.aborted = True
        if self._waiter is not None and not self._waiter.done():
            self._waiter.cancel()

    def done_one(self) -> None:
        """One text finished in the engine: it frees its place and counts toward the rate."""
        if self.held > 0:
            self.held -= 1
            self._admission._leave(self, 1, completed=True)

    def release(self) -> None:
        """The request is over: whatever it still holds (failed or aborted texts) leaves."""
        if self.held > 0:
            n, self.held = self.held, 0
            self._admission._leave(self, n, completed=False)


class Admission:
    """`limit` engine requests admitted at once (0: no bound). `capacity` is what the engine
    runs in one step (max_num_seqs); work beyond it waits in the engine's queue, which is what
    the deadline estimate looks at, at the current busy period's rate (`rate`). Refusals are
    spread out at the rate measured while the engine was full (`drain_rate`)."""

    def __init__(
        self,
        limit: int,
        capacity: int,
        window: float = 20.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.limit = limit
        self.capacity = capacity
        self.window = window
        self._clock = clock
        self.in_flight = 0
        self.draining = False
        self._completions: deque[tuple[float, int]] = deque()
        self._in_window = 0  # the sum of the completions' counts
        self._busy_since: float | None = None
        self._busy_done = 0  # completions since _busy_since
        self._line = 0.0  # when the last refused request's places will have drained
        # Spells in which the engine was full: the open one, and the last `window` seconds
        # of those that ended, as (seconds, completions) with their sums.
        self._full_since: float | None = None
        self._full_done = 0  # completions in the open spell
        self._spells: deque[tuple[float, int]] = deque()
        self._spell_seconds = 0.0
        self._spell_done = 0
        self._spell_end = 0.0  # when the last spell ended
        self._idle = asyncio.Event()
        self._idle.set()
        self._tickets: set[Ticket] = set()  # those holding places

    # -- the drain rate --------------------------------------------------------------------

    def rate(self) -> float:
        """Completions per second: over the last `window` seconds, or since the current busy
        period began when that is shorter (a burst after an idle hour is not diluted by it).
        Zero when nothing finished lately."""
        now = self._clock()
        self._forget(now)
        start, done = now - self.window, self._in_window
        if self._busy_since is not None and self._busy_since > start:
            # the busy period lies inside the window: its completions are the count since
            # it began (kept as a total: every request asks, and a window holds thousands)
            start, done = self._busy_since, self._busy_done
        return done / max(1.0, now - start) if done else 0.0

    def drain_rate(self) -> float:
        """Completions per second while the engine was full (the module's doc says why):
        over the open spell and the last `window` seconds of past ones, each counted for its
        own length. Zero when nothing finished in a full engine yet."""
        now = self._clock()
        open_seconds = 0.0 if self._full_since is None else now - self._full_since
        if open_seconds >= self.window:
            # full for the whole window: the busy period's recent completions are all the
            # full engine's, and the window follows a change (longer texts) as it comes
            return self.rate()
        seconds = self._spell_seconds + open_seconds
        done = self._spell_done + (self._full_done if self._full_since is not None else 0)
        return done / seconds if done and seconds > 0 else 0.0

    @property
    def _full_at(self) -> int:
        """In flight at which the engine runs all it can at once: a full engine."""
        return max(1, min(self.capacity, self.limit) if self.limit else self.capacity)

    def _end_spell(self, now: float) -> None:
        assert self._full_since is not None
        self._spells.append((now - self._full_since, self._full_done))
        self._spell_seconds += now - self._full_since
        self._spell_done += self._full_done
        self._full_since = None
        self._spell_end = now
        # keep the last `window` seconds of spells (the newest whatever its length)
        while len(self._spells) > 1 and self._spell_seconds - self._spells[0][0] >= self.window:
            seconds, done = self._spells.popleft()
            self._spell_seconds -= seconds
            self._spell_done -= done

    def _forget(self, now: float) -> None:
        while self._completions and self._completions[0][0] < now - self.window:
            self._in_window -= self._completions.popleft()[1]

    def _seconds_for(self, completions: int) -> float | None:
        rate = self.rate()
        return completions / rate if rate > 0 else None

    # -- admitting -------------------------------------------------------------------------

    def check_open(self) -> None:
        """Draining (503) once shutdown began."""
        if self.draining:
            raise Draining("the server is shutting down; retry shortly", DRAIN_RETRY)

    def admit(self, n: int, deadline_seconds: float | None = None) -> Ticket:
        """Admit `n` engine requests, or raise: Draining (503), Overloaded (429) past the
        bound, DeadlineUnmeetable (503) when the queue ahead will not even start this work
        within `deadline_seconds` at the current rate."""
        self.check_open()
        if self.limit and self.in_flight + n > self.limit:
            excess = self.in_flight + n - self.limit
            raise Overloaded(
                f"the server is at its limit of {self.limit} texts in flight; retry later",
                _clamp_retry(self._place_in_line(excess, n)),
            )
        queued = self.in_flight - self.capacity
        if deadline_seconds is not None and queued > 0:
            wait = self._seconds_for(queued)
            if wait is not None and wait >= deadline_seconds:
                raise DeadlineUnmeetable(
                    f"the work queued ahead needs about {wait:.1f} s, more than the "
                    f"{deadline_seconds:.1f} s left of this request's deadline; retry later "
                    "or allow more time",
                    _clamp_retry(wait - deadline_seconds),
                )
        now = self._clock()
        if self.in_flight == 0:
            self._busy_since = now
            self._busy_done = 0
            self._idle.clear()
        self.in_flight += n
        if self._full_since is None and self.in_flight >= self._full_at:
            self._full_since, self._full_done = now, 0
        ticket = Ticket(self, n)
        self._tickets.add(ticket)
        return ticket

    def _place_in_line(self, excess: int, n: int) -> float:
        """Seconds until a refused request of `n` texts, `excess` over the bound, may expect
        room: behind everyone refused before it, at the drain rate."""
        rate = self.drain_rate()
        if rate <= 0:
            return MIN_RETRY
        now = self._clock()
        self._line = max(self._line, now + excess / rate)
        wait = self._line - now
        self._line = min(self._line + n / rate, now + MAX_RETRY)
        return wait

    def _leave(self, ticket: Ticket, n: int, completed: bool) -> None:
        if ticket.held == 0:
            self._tickets.discard(ticket)
        self.in_flight -= n
        now = self._clock()
        if completed:
            self._completions.append((now, n))
            self._in_window += n
            self._busy_done += n
            if self._full_since is not None:
                self._full_done += n
            elif self._spells and now - self._spell_end <= SAME_STEP:
                # finished in the engine step that ended the spell: the full engine's work
                # (a spell that ended at its first of four lost three of every four)
                seconds, done = self._spells[-1]
                self._spells[-1] = (seconds, done + n)
                self._spell_done += n
        if self._full_since is not None and self.in_flight < self._full_at:
            self._end_spell(now)
        if self.in_flight == 0:
            self._busy_since = None
            self._idle.set()

    # -- draining --------------------------------------------------------------------------

    def drain(self) -> None:
        """Refuse new work from now on (readiness fails too)."""
        self.draining = True

    async def wait_idle(self) -> None:
        """Return once no admitted work is left."""
        await self._idle.wait()

    def abort(self) -> int:
        """Stop for good (a shutdown past its drain): refuse new work and abort what is
        admitted, each request answered 503 `draining` (its engine work cancelled) instead of
        being cut off with the connection. Returns how many requests were aborted."""
        self.drain()
        tickets = list(self._tickets)
        for ticket in tickets:
            ticket._abort()
        return len(tickets)
