"""is_tiered: the per-class answer agrees with the runtime Protocol check."""

from __future__ import annotations

from dragoman.engine.echo import EchoTranslator
from dragoman.engine.multi import MultiTranslator
from dragoman.engine.protocol import Tiered, is_tiered


def test_is_tiered_agrees_with_the_protocol_check() -> None:
    echo = EchoTranslator("echo", ("en", "fr"), 0.0)
    multi = MultiTranslator({"echo": echo}, {("en", "fr"): "echo"})
    assert is_tiered(multi) and isinstance(multi, Tiered)
    assert not is_tiered(echo) and not isinstance(echo, Tiered)
    assert not is_tiered(object())
