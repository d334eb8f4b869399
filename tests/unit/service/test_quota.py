from __future__ import annotations

import pytest

from dragoman.errors import QuotaExceeded, RateLimited, TextTooLong
from dragoman.service.keys import ANONYMOUS, Caller
from dragoman.service.quota import KeyLimits

ALICE = Caller("a" * 64, "alice")
BOB = Caller("b" * 64, None)


class Clock:
    def __init__(self) -> None:
        self.now = 500.0

    def __call__(self) -> float:
        return self.now


def use(limits: KeyLimits, caller: Caller, chars: int) -> None:
    limits.check(caller, chars)
    limits.charge(caller, chars)


def test_requests_per_minute_hold_exactly_at_the_limit() -> None:
    clock = Clock()
    limits = KeyLimits(3, 0, clock=clock)
    for _ in range(3):
        use(limits, ALICE, 10)
        clock.now += 10
    with pytest.raises(RateLimited) as exc:
        limits.check(ALICE, 1)
    assert exc.value.message == "this key's limit of 3 requests a minute is used up"
    assert exc.value.retry_after == 30  # the first request ages out 60 s after it was sent
    use(limits, BOB, 1)  # each key its own minute
    clock.now += 30
    use(limits, ALICE, 1)


def test_characters_per_minute_hold_exactly_at_the_limit() -> None:
    clock = Clock()
    limits = KeyLimits(0, 100, clock=clock)
    use(limits, ALICE, 60)
    clock.now += 20
    use(limits, ALICE, 40)  # exactly 100
    with pytest.raises(RateLimited) as exc:
        limits.check(ALICE, 1)
    assert exc.value.message == (
        "this key's limit of 100 characters a minute is used up (100 used, 1 asked)"
    )
    assert exc.value.retry_after == 40  # when the first 60 age out
    with pytest.raises(TextTooLong) as too_long:
        limits.check(ALICE, 101)
    assert (
        too_long.value.message == "the request has 101 characters; this key may send 100 a minute"
    )


def test_retry_after_waits_for_both_limits_when_both_hold() -> None:
    # It named the request limit's wait alone: a client honouring it came back while its
    # characters still filled the minute, and was refused again.
    clock = Clock()
    limits = KeyLimits(2, 50, clock=clock)
    use(limits, ALICE, 5)
    clock.now += 20
    use(limits, ALICE, 40)
    with pytest.raises(RateLimited) as exc:
        limits.check(ALICE, 30)
    assert exc.value.message == "this key's limit of 2 requests a minute is used up"
    assert exc.value.retry_after == 60  # the 40 characters age out 60 s after they came
    clock.now += 59
    with pytest.raises(RateLimited):
        limits.check(ALICE, 30)
    clock.now += 1
    use(limits, ALICE, 30)


def test_no_key_no_limit() -> None:
    limits = KeyLimits(1, 1)
    for _ in range(5):
        use(limits, ANONYMOUS, 1000)


def test_day_quota_holds_exactly_and_resets_at_utc_midnight() -> None:
    import datetime as dt

    day = [dt.datetime(2026, 11, 23, 23, 59, 0, tzinfo=dt.UTC)]
    limits = KeyLimits(0, 0, chars_per_day=100, now=lambda: day[0])
    use(limits, ALICE, 60)
    use(limits, ALICE, 40)  # exactly the quota
    assert limits.day_usage(ALICE) == 100
    with pytest.raises(QuotaExceeded) as err:
        limits.check(ALICE, 1)
    assert err.value.retry_after == 60  # a minute to midnight UTC
    use(limits, BOB, 100)  # each key its own
    day[0] += dt.timedelta(minutes=2)
    assert limits.day_usage(ALICE) == 0
    use(limits, ALICE, 100)


def test_a_request_over_the_whole_day_quota_is_too_long_not_a_wait() -> None:
    """It was told to retry at midnight, when it could never pass."""
    limits = KeyLimits(0, 0, chars_per_day=100)
    with pytest.raises(TextTooLong, match="may send 100 a day"):
        limits.check(ALICE, 101)
    limits.check(ALICE, 100)  # the whole quota at once is allowed


def test_day_usage_is_counted_without_keys_too() -> None:
    limits = KeyLimits(0, 0, chars_per_day=10)
    use(limits, ANONYMOUS, 50)  # no key: no quota, but the server's day is counted
    assert limits.day_usage(ANONYMOUS) == 50


def test_characters_per_minute_running_total_ages_out() -> None:
    clock = Clock()
    limits = KeyLimits(0, 100, clock=clock)
    for _ in range(10):
        use(limits, ALICE, 10)  # 100 in the minute
        clock.now += 1
    with pytest.raises(RateLimited):
        limits.check(ALICE, 1)
    clock.now += 51  # t=561: the entries of t=500 and t=501 have aged out (80 left)
    use(limits, ALICE, 10)  # 90
    limits.check(ALICE, 10)  # exactly 100 fits
    with pytest.raises(RateLimited):
        limits.check(ALICE, 11)


def test_a_reservation_settles_to_what_was_spent_in_the_day_and_the_minute() -> None:
    """A chat answer is charged the most it may cost when admitted, lowered once it ends."""
    clock = Clock()
    limits = KeyLimits(0, 100, chars_per_day=1000, clock=clock)
    limits.check(ALICE, 90)
    charge = limits.charge(ALICE, 90)
    with pytest.raises(RateLimited):
        limits.check(ALICE, 11)  # the reservation holds the minute
    limits.settle(charge, 30)
    assert limits.day_usage(ALICE) == 30
    use(limits, ALICE, 70)  # exactly the minute's 100 again
    with pytest.raises(RateLimited):
        limits.check(ALICE, 1)
    limits.settle(charge, 50)  # never raised again
    assert limits.day_usage(ALICE) == 100


def test_a_charge_settled_after_its_minute_leaves_the_minute_alone() -> None:
    clock = Clock()
    limits = KeyLimits(0, 100, chars_per_day=1000, clock=clock)
    charge = limits.charge(ALICE, 90)
    clock.now += 61  # aged out of the minute
    use(limits, ALICE, 100)
    limits.settle(charge, 10)  # the day gets 80 back, the minute (100 of later use) nothing
    assert limits.day_usage(ALICE) == 110
    with pytest.raises(RateLimited):
        limits.check(ALICE, 1)


def test_room_is_what_is_left_of_the_day_within_the_whole_minute() -> None:
    limits = KeyLimits(0, 100, chars_per_day=250)
    assert limits.room(ANONYMOUS) is None  # no key, no limit
    assert KeyLimits(5, 0).room(ALICE) is None  # no character limit
    assert limits.room(ALICE) == 100
    use(limits, ALICE, 100)
    assert limits.room(ALICE) == 100  # the minute's own use is a wait, not less room
    limits.charge(ALICE, 100)
    assert limits.room(ALICE) == 50
