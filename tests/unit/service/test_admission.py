from __future__ import annotations

import asyncio
from collections import deque

import pytest

from dragoman.errors import DeadlineUnmeetable, Draining, Overloaded, ShutDown
from dragoman.service.admission import Admission, Ticket


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_admits_up_to_the_bound_then_refuses_with_the_retry_floor() -> None:
    a = Admission(limit=4, capacity=2, clock=Clock())
    a.admit(3)
    a.admit(1)
    with pytest.raises(Overloaded) as exc:
        a.admit(1)
    assert exc.value.status_code == 429
    assert exc.value.message == "the server is at its limit of 4 texts in flight; retry later"
    assert exc.value.headers() == {"Retry-After": "1"}  # nothing finished yet: no rate
    assert a.in_flight == 4


def test_a_list_is_admitted_whole_or_not_at_all() -> None:
    a = Admission(limit=4, capacity=2, clock=Clock())
    a.admit(2)
    with pytest.raises(Overloaded):
        a.admit(3)
    assert a.in_flight == 2  # nothing of the refused list was taken
    a.admit(2)
    assert a.in_flight == 4


def test_zero_limit_admits_everything() -> None:
    a = Admission(limit=0, capacity=2, clock=Clock())
    for _ in range(100):
        a.admit(64)
    assert a.in_flight == 6400


def test_retry_after_follows_the_drain_rate() -> None:
    clock = Clock()
    a = Admission(limit=10, capacity=2, clock=clock)
    tickets = [a.admit(1) for _ in range(10)]
    # Four texts finish over four seconds: 1 per second.
    for t in tickets[:4]:
        clock.now += 1
        t.done_one()
    assert a.rate() == pytest.approx(1.0)
    for _ in range(4):
        a.admit(1)
    # Full again; a list of 3 needs 3 places: about 3 s at 1 text a second.
    with pytest.raises(Overloaded) as exc:
        a.admit(3)
    assert exc.value.retry_after == 3


def test_retry_after_is_capped_at_a_minute() -> None:
    clock = Clock()
    a = Admission(limit=64, capacity=16, window=20, clock=clock)
    tickets = [a.admit(1) for _ in range(64)]
    clock.now += 20
    tickets[0].done_one()  # one text in 20 s
    a.admit(1)
    with pytest.raises(Overloaded) as exc:
        a.admit(4)
    assert exc.value.retry_after == 60


def test_rate_counts_only_the_recent_window_of_the_busy_period() -> None:
    clock = Clock()
    a = Admission(limit=0, capacity=2, window=10, clock=clock)
    t = a.admit(5)
    for _ in range(5):
        t.done_one()  # the burst finishes at once: idle again
    assert a.in_flight == 0
    clock.now += 3600
    assert a.rate() == 0.0  # an hour later nothing is recent
    a.admit(2).done_one()
    assert a.rate() == 1.0  # one completion, elapsed floored at a second


def test_release_frees_what_is_left_without_counting_it_as_done() -> None:
    clock = Clock()
    a = Admission(limit=8, capacity=2, clock=clock)
    t = a.admit(3)
    t.done_one()
    t.release()
    t.release()  # twice is harmless
    assert a.in_flight == 0
    assert a.rate() == pytest.approx(1 / 20)  # idle: the whole window; the failed two never count


def test_deadline_that_the_queue_cannot_meet_is_refused() -> None:
    clock = Clock()
    a = Admission(limit=0, capacity=2, clock=clock)
    tickets = [a.admit(1) for _ in range(12)]
    clock.now += 2
    tickets[0].done_one()
    tickets[1].done_one()  # 2 texts in 2 s: 1 a second; 10 in flight, 8 waiting
    with pytest.raises(DeadlineUnmeetable) as exc:
        a.admit(1, deadline_seconds=5.0)
    assert exc.value.status_code == 503
    assert exc.value.message == (
        "the work queued ahead needs about 8.0 s, more than the 5.0 s left of this request's "
        "deadline; retry later or allow more time"
    )
    assert exc.value.retry_after == 3
    a.admit(1, deadline_seconds=9.0)  # enough time: admitted


def test_no_estimate_no_refusal_while_the_engine_has_room() -> None:
    clock = Clock()
    a = Admission(limit=0, capacity=16, clock=clock)
    t = a.admit(10)
    clock.now += 100
    t.done_one()
    a.admit(1, deadline_seconds=0.001)  # 9 in flight < 16 slots: nothing waits


async def test_drain_refuses_new_work_and_waits_for_admitted() -> None:
    a = Admission(limit=4, capacity=2)
    t = a.admit(2)
    a.drain()
    with pytest.raises(Draining) as exc:
        a.admit(1)
    assert exc.value.headers() == {"Retry-After": "5"}
    waiter = asyncio.create_task(a.wait_idle())
    await asyncio.sleep(0.01)
    assert not waiter.done()
    t.done_one()
    t.done_one()
    await asyncio.wait_for(waiter, 1)


def test_refused_requests_are_spread_out_in_a_line() -> None:
    """A crowd refused at once is told to come back one after another, at the drain rate,
    rather than all together after a second."""
    clock = Clock()
    a = Admission(limit=10, capacity=2, clock=clock)
    tickets = [a.admit(1) for _ in range(10)]
    for t in tickets[:4]:  # 1 text a second
        clock.now += 1
        t.done_one()
    for _ in range(4):
        a.admit(1)
    waits = []
    for _ in range(5):
        with pytest.raises(Overloaded) as exc:
            a.admit(1)
        waits.append(exc.value.retry_after)
    assert waits == [1, 2, 3, 4, 5]


def test_a_crowd_at_an_idle_server_is_spread_by_the_last_busy_periods_rate() -> None:
    """Nothing has finished yet in this busy period: the line uses the rate the server
    drained at when it was last busy, instead of telling everyone to come back in a second."""
    clock = Clock()
    a = Admission(limit=4, capacity=2, clock=clock)
    tickets = [a.admit(1) for _ in range(4)]
    for t in tickets:  # 2 texts a second, then idle
        clock.now += 0.5
        t.done_one()
    assert a.in_flight == 0
    clock.now += 3600  # long idle: nothing recent, but the last busy period's rate is known
    assert a.rate() == 0.0
    for _ in range(4):
        a.admit(1)
    waits = []
    for _ in range(4):
        with pytest.raises(Overloaded) as exc:
            a.admit(1)
        waits.append(exc.value.retry_after)
    assert waits == [1, 1, 2, 2]  # 0.5, 1.0, 1.5, 2.0 s at 2 a second, rounded up


def refusals(a: Admission, count: int) -> list[int]:
    """The Retry-After of `count` single texts refused one after another."""
    waits = []
    for _ in range(count):
        with pytest.raises(Overloaded) as exc:
            a.admit(1)
        waits.append(exc.value.retry_after)
    return waits


def test_light_traffic_says_nothing_of_the_drain_rate() -> None:
    """One text at a time on an engine that runs four at once: 1 completion every 0.3 s is
    how much work came, not how fast the server drains. Taken for the drain rate (floored at
    a second: 1 a second), a crowd was spread out up to a minute for a server free at once."""
    clock = Clock()
    a = Admission(limit=8, capacity=4, clock=clock)
    for _ in range(3):  # one request, idle, one request ...
        t = a.admit(1)
        clock.now += 0.3
        t.done_one()
        clock.now += 0.3
    for _ in range(8):
        a.admit(1)
    assert refusals(a, 5) == [1] * 5  # nothing measured in a full engine yet


def test_steady_light_traffic_says_nothing_of_the_drain_rate_either() -> None:
    clock = Clock()
    a = Admission(limit=8, capacity=4, clock=clock)
    t = a.admit(1)
    for _ in range(10):  # two overlapping at most, one finishing a second: never full
        nxt = a.admit(1)
        clock.now += 1
        t.done_one()
        t = nxt
    assert a.rate() == pytest.approx(1.0)  # the busy period's rate (deadlines use it)
    for _ in range(7):
        a.admit(1)
    assert refusals(a, 5) == [1] * 5


def test_a_short_full_spell_counts_for_its_own_length() -> None:
    """Eight texts drain in 0.4 s: stretched to a second, the rate was 8 a second and sixteen
    refused clients were spread over 2 s; the engine, full, freed a place every 0.05 s."""
    clock = Clock()
    a = Admission(limit=8, capacity=4, clock=clock)
    tickets = [a.admit(1) for _ in range(8)]
    for t in tickets:
        clock.now += 0.05
        t.done_one()
    # five finished while four or more were in flight (the engine full), in 0.25 s
    assert a.drain_rate() == pytest.approx(20.0)
    clock.now += 600
    for _ in range(8):
        a.admit(1)
    assert refusals(a, 16) == [1] * 16  # 0.05 s to 0.8 s


def test_a_long_full_spell_is_measured_over_the_recent_window() -> None:
    """Full for longer than the window: its last `window` seconds say how fast it drains now
    (the texts got shorter: 4 a second), not its whole length (2.5 a second)."""
    clock = Clock()
    a = Admission(limit=100, capacity=4, window=20, clock=clock)
    tickets = deque(a.admit(1) for _ in range(100))
    for step in [1.0] * 20 + [0.25] * 80:  # 1 a second for 20 s, then 4 a second for 20 s
        clock.now += step
        tickets.popleft().done_one()
        tickets.append(a.admit(1))  # kept at the bound
    assert a.drain_rate() == pytest.approx(81 / 20)  # the window's first edge included
    assert refusals(a, 4) == [1, 1, 1, 1]  # 0.25 s to 1 s


def test_without_any_rate_yet_the_refusal_says_a_second() -> None:
    a = Admission(limit=1, capacity=1, clock=Clock())
    a.admit(1)
    with pytest.raises(Overloaded) as exc:
        a.admit(1)
    assert exc.value.retry_after == 1


def test_a_deadline_is_never_refused_on_a_past_busy_periods_rate() -> None:
    """Early refusals for deadlines use only what the engine is doing now."""
    clock = Clock()
    a = Admission(limit=100, capacity=1, clock=clock)
    t = a.admit(1)
    clock.now += 10
    t.done_one()  # 0.1 a second over the window's 10 s... then idle
    clock.now += 3600
    a.admit(1)
    a.admit(1)  # one queued behind the engine's single place
    a.admit(1, deadline_seconds=1.0)  # no current rate: no refusal


async def _waiting_on(t: Ticket) -> asyncio.Task[None]:
    """A task waiting on `t`'s work as the translation service's does, once it waits."""
    started = asyncio.Event()

    async def work() -> None:
        t.waiting_in(asyncio.current_task())
        try:
            started.set()
            await asyncio.sleep(60)
        except asyncio.CancelledError as cancelled:
            raise t.aborted_by(cancelled) from None
        finally:
            t.waiting_in(None)
            t.release()

    task = asyncio.create_task(work())
    await asyncio.wait_for(started.wait(), 5)
    return task


async def test_abort_answers_the_waiting_work_and_refuses_new() -> None:
    """A shutdown past its drain: the task waiting on admitted work gets ShutDown (503
    `draining`) instead of being cancelled with its connection; new work is refused."""
    a = Admission(limit=4, capacity=2)
    t = a.admit(2)
    task = await _waiting_on(t)
    assert a.abort() == 1
    with pytest.raises(ShutDown) as exc:
        await asyncio.wait_for(task, 5)
    assert (exc.value.status_code, exc.value.code) == (503, "draining")
    assert exc.value.headers() == {"Retry-After": "5"}
    assert a.in_flight == 0
    assert a.abort() == 0  # nothing left to abort
    with pytest.raises(Draining):
        a.admit(1)


async def test_a_cancellation_that_is_not_an_abort_stays_a_cancellation() -> None:
    a = Admission(limit=4, capacity=2)
    t = a.admit(1)
    task = await _waiting_on(t)
    task.cancel()  # a client gone, a deadline: not the server's abort
    with pytest.raises(asyncio.CancelledError):
        await task
    assert a.in_flight == 0


def test_a_ticket_aborted_between_two_waits_says_so_at_the_next() -> None:
    a = Admission(limit=4, capacity=2)
    t = a.admit(1)
    t.check_aborted()  # not aborted: nothing raised
    a.abort()  # nobody waiting on it right now
    with pytest.raises(ShutDown):
        t.check_aborted()


def test_texts_finishing_in_the_step_that_ends_a_full_spell_count_toward_it() -> None:
    """Four texts at once, all four done in one engine step each second: 4 a second, not the
    one that took the engine below full (the next 8 refused were told 1..8 s, not 1..2)."""
    clock = Clock()
    a = Admission(limit=4, capacity=4, clock=clock)
    for _ in range(3):
        tickets = [a.admit(1) for _ in range(4)]
        clock.now += 1
        for t in tickets:
            t.done_one()
    assert a.drain_rate() == pytest.approx(4.0)
