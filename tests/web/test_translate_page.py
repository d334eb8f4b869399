"""The translate page at / in a real browser, against a real echo server (which answers with
the text itself), so these prove the page's mechanics; tests/integration/test_web_live.py
proves a real translation."""

from __future__ import annotations

import re
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import expect

from dragoman.bench.servers import Launched, launch_echo
from tests.web._browser import Page
from tests.web.conftest import CHAR_LIMIT, LANGUAGES

pytestmark = pytest.mark.browser


def open_page(p: Page, url: str) -> None:
    p.page.goto(f"{url}/")
    expect(p.page.locator("#target option")).not_to_have_count(0)  # languages loaded


def test_page_loads_with_no_console_errors_and_translates(page: Page, echo: Launched) -> None:
    open_page(page, echo.url)
    expect(page.page).to_have_title("dragoman: translate")
    expect(page.page.locator("#count")).to_have_text(f"0 / {CHAR_LIMIT}")
    page.page.select_option("#source", "en")
    page.page.select_option("#target", "fr")
    page.page.fill("#text", "Thank you very much for your help.")
    expect(page.page.locator("#count")).to_have_text(f"34 / {CHAR_LIMIT}")
    page.page.keyboard.press("Control+Enter")
    expect(page.page.locator("#result")).to_have_text("Thank you very much for your help.")
    timing = page.page.locator("#timing")
    expect(timing).to_contain_text("queueing")
    expect(timing).to_contain_text("ms translating")  # the echo's 20 ms
    expect(page.page.locator("#error")).to_be_hidden()
    expect(page.page.locator("#copy")).to_be_enabled()
    assert page.errors == []


def test_languages_listed_by_name_and_swap_uses_the_detected_language(
    page: Page, echo: Launched
) -> None:
    open_page(page, echo.url)
    names = page.page.locator("#source option").all_inner_texts()
    assert names == ["Detect language", "English", "French", "German"]
    page.page.select_option("#source", "auto")
    page.page.select_option("#target", "de")
    page.page.fill("#text", "Bonjour tout le monde, comment allez-vous aujourd'hui ?")
    page.page.click("#translate")
    expect(page.page.locator("#timing")).to_contain_text("Detected French.")
    page.page.keyboard.press("Alt+s")
    expect(page.page.locator("#source")).to_have_value("de")
    expect(page.page.locator("#target")).to_have_value("fr")
    expect(page.page.locator("#result")).to_be_empty()  # the result became the new input
    assert page.errors == []


def test_html_mode_sends_markup_and_shows_it_as_text(page: Page, echo: Launched) -> None:
    open_page(page, echo.url)
    page.page.select_option("#source", "en")
    page.page.check('input[name="format"][value="html"]')
    page.page.fill("#text", "<p>Hello <b>world</b></p>")
    page.page.keyboard.press("Control+Enter")
    expect(page.page.locator("#result")).to_have_text("<p>Hello <b>world</b></p>")
    expect(page.page.locator("#result b")).to_have_count(0)  # never rendered as HTML


def test_unknown_language_shows_the_servers_message(page: Page, echo: Launched) -> None:
    open_page(page, echo.url)
    page.page.select_option("#source", "en")
    # A code the server does not know, as a stale or hand-edited list would send.
    page.page.evaluate(
        "() => { const o = new Option('Klingon', 'xx'); document.getElementById('target')"
        ".append(o); o.selected = true; }"
    )
    page.page.fill("#text", "Hello")
    page.page.click("#translate")
    error = page.page.locator("#error")
    expect(error).to_have_text("Target_lang: unknown language code 'xx' (ISO 639-1)")
    expect(page.page.locator("#result")).to_be_empty()
    expect(page.page.locator("#translate")).to_be_enabled()


def test_too_long_text_is_flagged_and_the_server_refusal_shown(page: Page, echo: Launched) -> None:
    open_page(page, echo.url)
    page.page.select_option("#source", "en")
    page.page.fill("#text", "a" * (CHAR_LIMIT + 20))
    count = page.page.locator("#count")
    expect(count).to_have_text(f"120 / {CHAR_LIMIT}")
    expect(count).to_have_class(re.compile(r"\bover\b"))
    page.page.keyboard.press("Control+Enter")
    expect(page.page.locator("#error")).to_have_text(
        f"Text is 120 characters; the limit is {CHAR_LIMIT}"
    )


def test_empty_text_is_not_sent(page: Page, echo: Launched) -> None:
    open_page(page, echo.url)
    page.page.click("#translate")
    expect(page.page.locator("#error")).to_have_text("Type some text to translate first.")


def test_key_prompt_when_the_server_requires_keys(
    page: Page, logs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DRAGOMAN_API_KEYS", "good-key")
    server = launch_echo(logs, LANGUAGES)
    try:
        open_page(page, server.url)
        form = page.page.locator("#key-form")
        expect(form).to_be_visible()  # /frontend/settings says a key is required
        page.page.fill("#api-key", "wrong-key")
        page.page.fill("#text", "Hello there")
        page.page.select_option("#source", "en")
        page.page.click("#key-form button")  # submitting with text present translates
        expect(page.page.locator("#error")).to_contain_text("not valid")
        expect(form).to_be_visible()
        page.page.fill("#api-key", "good-key")
        page.page.keyboard.press("Enter")
        expect(page.page.locator("#result")).to_have_text("Hello there")
        expect(form).to_be_hidden()
        stored = page.page.evaluate("() => sessionStorage.getItem('dragoman.apiKey')")
        assert stored == "good-key"
        # The key went as a Bearer header: the same request without it is refused.
        r = httpx.post(
            f"{server.url}/v1/translate",
            json={"text": "Hello there", "source_lang": "en", "target_lang": "fr"},
        )
        assert r.status_code == 401
    finally:
        server.stop()


def test_swap_during_a_translation_keeps_the_new_text_and_drops_the_stale_reply(
    page: Page, logs: Path
) -> None:
    """Swapping while a translation ran copied the previous result over the text typed since,
    and the stale reply then landed under the swapped languages."""
    # Each answer takes 8 s: the swap lands while the second translation runs, on any host
    # (the page's actions take milliseconds; the aborted one is not waited for).
    server = launch_echo(logs, LANGUAGES, "--echo-delay", "8")
    try:
        open_page(page, server.url)
        page.page.select_option("#source", "en")
        page.page.select_option("#target", "fr")
        page.page.fill("#text", "The first text")
        page.page.click("#translate")
        expect(page.page.locator("#result")).to_have_text("The first text", timeout=60_000)
        page.page.fill("#text", "A second text typed since")
        page.page.click("#translate")
        expect(page.page.locator("#translate")).to_have_text("Translating…")
        with page.page.expect_event("requestfailed") as failed:  # the running one, aborted
            page.page.keyboard.press("Alt+s")
        assert failed.value.url.endswith("/v1/translate")
        expect(page.page.locator("#source")).to_have_value("fr")
        expect(page.page.locator("#target")).to_have_value("en")
        expect(page.page.locator("#translate")).to_have_text("Translate")
        expect(page.page.locator("#text")).to_have_value("A second text typed since")
        expect(page.page.locator("#result")).to_be_empty()
        assert page.errors == []
    finally:
        server.stop()


def test_settings_are_asked_again_while_the_server_is_not_ready(
    page: Page, logs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """/frontend/settings answers 503 while the engine loads: the page asked once, so it never
    showed the limit nor asked for the key until a translation failed."""
    monkeypatch.setenv("DRAGOMAN_API_KEYS", "good-key")
    server = launch_echo(logs, LANGUAGES, "--max-text-chars", "50")
    asked: list[str] = []

    def loading_first(route):  # type: ignore[no-untyped-def]
        asked.append(route.request.url)
        if len(asked) == 1:
            route.fulfill(
                status=503,
                json={"error": "the engine is loading"},
                headers={"Retry-After": "1"},
            )
        else:
            route.continue_()

    try:
        page.page.route("**/frontend/settings", loading_first)
        open_page(page, server.url)
        expect(page.page.locator("#key-form")).to_be_visible()
        expect(page.page.locator("#count")).to_have_text("0 / 50")
        assert len(asked) == 2
    finally:
        server.stop()


def test_a_refusal_with_retry_after_reads_as_two_sentences(
    page: Page, logs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DRAGOMAN_API_KEYS", "k")
    server = launch_echo(logs, LANGUAGES, "--key-requests-per-minute", "1")
    try:
        page.page.add_init_script("sessionStorage.setItem('dragoman.apiKey', 'k')")
        open_page(page, server.url)
        page.page.select_option("#source", "en")
        page.page.fill("#text", "Hello there")
        page.page.click("#translate")
        expect(page.page.locator("#result")).to_have_text("Hello there")
        page.page.click("#translate")
        error = page.page.locator("#error")
        expect(error).to_contain_text(re.compile(r"[a-z0-9]\. Retry in \d+ s\.$"))
        assert ". . " not in error.inner_text() and ".. " not in error.inner_text()
    finally:
        server.stop()


@pytest.mark.parametrize("path", ["/", "/dashboard"])
def test_the_pages_fit_a_phone_without_scrolling_sideways(
    browser, echo: Launched, path: str
) -> None:  # type: ignore[no-untyped-def]
    context = browser.new_context(viewport={"width": 375, "height": 740})
    try:
        p = context.new_page()
        p.goto(echo.url + path)
        p.locator("header.bar").wait_for()
        wide = p.evaluate("() => document.documentElement.scrollWidth")
        assert wide <= 375
    finally:
        context.close()
