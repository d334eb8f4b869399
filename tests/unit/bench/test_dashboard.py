from __future__ import annotations

import io

import pytest
from rich.console import Console

from dragoman.bench import dashboard


@pytest.mark.parametrize("open_browser", [False, True])
def test_announce_prints_the_dashboard_and_opens_it_only_when_asked(
    monkeypatch: pytest.MonkeyPatch, open_browser: bool
) -> None:
    opened: list[str] = []
    monkeypatch.setattr(dashboard.webbrowser, "open", lambda url: opened.append(url) or True)
    out = io.StringIO()
    dashboard.announce(Console(file=out, width=200), "http://127.0.0.1:9", open_browser)
    assert "watch it live: http://127.0.0.1:9/dashboard" in out.getvalue()
    assert opened == (["http://127.0.0.1:9/dashboard"] if open_browser else [])
