from __future__ import annotations

import pytest

from dragoman.errors import InvalidRequest
from dragoman.service.deadline import Deadline, parse_timeout


def test_a_client_may_shorten_the_deadline_never_lengthen_it() -> None:
    d = Deadline.start(300, started=100.0)
    assert d.tighten(None) is d
    assert d.tighten(1000).seconds == 300
    short = d.tighten(2.5)
    assert (short.seconds, short.started) == (2.5, 100.0)
    assert short.remaining(now=101.0) == pytest.approx(1.5)


@pytest.mark.parametrize("value", ["0", "-1", "abc", "nan", "inf", ""])
def test_bad_timeout_header_is_refused(value: str) -> None:
    with pytest.raises(InvalidRequest) as exc:
        parse_timeout(value, "X-Request-Timeout")
    assert exc.value.message == (
        f"X-Request-Timeout: must be a positive number of seconds, got {value!r}"
    )


def test_timeout_header_parses_seconds() -> None:
    assert parse_timeout(None, "X") is None
    assert parse_timeout("2.5", "X") == 2.5
