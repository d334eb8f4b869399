"""Helpers of the bench's signal tests: a bench started as a user's terminal starts it."""

from __future__ import annotations

import signal


def default_signals() -> None:
    """A child's `preexec_fn`: SIGINT, SIGHUP and SIGTERM at their default. A test runner
    started in the background has SIGINT ignored, one under nohup SIGHUP, and children inherit
    that (the bench keeps an ignored signal ignored); the child must get them as a user's
    terminal gives them."""
    for sig in (signal.SIGINT, signal.SIGHUP, signal.SIGTERM):
        signal.signal(sig, signal.SIG_DFL)
