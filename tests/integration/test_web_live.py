"""The translate page on the real engine, in a real headless chromium: a real sentence comes
back translated; the dashboard then shows vLLM's own engine gauges."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from dragoman.bench.servers import Launched
from tests.integration.conftest import Pace
from tests.web._browser import Page, browser, page  # noqa: F401 (fixtures)

pytestmark = [pytest.mark.integration, pytest.mark.browser]


def test_translate_page_shows_a_real_translation(
    page: Page,  # noqa: F811
    live_server: Launched,
    pace: Pace,
) -> None:
    p = page.page
    p.goto(f"{live_server.url}/")
    expect(p.locator("#target option")).not_to_have_count(0)
    p.select_option("#source", "en")
    p.select_option("#target", "fr")
    # Not a sentence other tests send: the answer must come from the engine, not the cache.
    p.fill("#text", "Thank you very much for your kind words.")
    p.keyboard.press("Control+Enter")
    result = p.locator("#result")
    expect(result).to_contain_text("Merci", timeout=pace.deadline(64) * 1000)
    text = result.inner_text()
    assert "Thank you" not in text
    expect(p.locator("#timing")).to_contain_text(re.compile(r"\d+ (ms|s) translating"))
    assert page.errors == []

    p.goto(f"{live_server.url}/dashboard")
    expect(p.locator("#status")).to_contain_text("engine ready · continuous")
    # vLLM's gauges are read from the same registry as /metrics: KV cache use is a number.
    expect(p.locator(".tile[data-tile='KV cache'] .value")).to_contain_text("%")
    expect(p.locator(".tile[data-tile='Waiting'] .value")).to_have_text(re.compile(r"^\d+$"))
    assert page.errors == []
