"""SIGTERM and SIGHUP taken as Ctrl-C by the commands that must clean up on the way out
(`bench` and `tune` stop the servers they started, `model prepare` removes its work): a
supervisor's stop, a deadline's `timeout` or a closed terminal otherwise ended them at once."""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Iterator
from types import FrameType


def _as_ctrl_c(_signum: int, frame: FrameType | None) -> None:
    # Whatever handles Ctrl-C now: asyncio.run's cancels its main task, which keeps what
    # finished; outside it, or with SIGINT ignored, KeyboardInterrupt.
    handler = signal.getsignal(signal.SIGINT)
    if not callable(handler):
        handler = signal.default_int_handler
    handler(signal.SIGINT, frame)


def _forget_interrupted_string_code() -> None:
    """CPython marks a KeyboardInterrupt that ends code run from a string (exec or eval: the
    methods dataclasses and namedtuple make, as a lazy import defines its classes) as
    unhandled, even when a caller catches it; under `python -m`, the interpreter then exits
    by SIGINT (status -2) in place of the status the command returned, once its cleanup ran.
    Running a string again clears the mark (the interrupt is handled by now)."""
    exec("", {})


@contextlib.contextmanager
def stops_as_ctrl_c() -> Iterator[None]:
    """Inside, SIGTERM and SIGHUP do what Ctrl-C does; an ignored one stays ignored (under
    nohup a closed terminal's SIGHUP must not stop an hours-long run)."""
    previous = {
        sig: signal.signal(sig, _as_ctrl_c)
        for sig in (signal.SIGTERM, signal.SIGHUP)
        if signal.getsignal(sig) != signal.SIG_IGN
    }
    try:
        yield
    finally:
        try:
            for sig, handler in previous.items():  # None: set outside Python, left as default
                signal.signal(sig, signal.SIG_DFL if handler is None else handler)
        finally:
            _forget_interrupted_string_code()
