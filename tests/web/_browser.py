"""Browser fixtures: Debian's chromium (the system package, never a downloaded build) driven
by Playwright; each test gets a fresh context (its own sessionStorage) and a page that records
console errors and uncaught exceptions. Without chromium or Playwright the tests skip, saying
how to install them."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

INSTALL = "scripts/_env.sh installs it when run as root; else `sudo apt-get install chromium`"


# Module-scoped, not session-scoped: while sync Playwright runs, its event loop is the
# thread's, and the async tests of later modules could not start their own.
@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("playwright is not installed: pip install -e '.[dev]'")
    executable = shutil.which("chromium") or shutil.which("chromium-browser")
    if executable is None:
        pytest.skip(f"no system chromium: {INSTALL}")
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=executable)
        yield b
        b.close()


@dataclass
class Page:
    """A Playwright page and what went wrong in it."""

    page: Any
    errors: list[str] = field(default_factory=list)


@pytest.fixture
def page(browser: Any) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 1280, "height": 860})
    p = Page(context.new_page())
    p.page.on("console", lambda m: p.errors.append(m.text) if m.type == "error" else None)
    p.page.on("pageerror", lambda e: p.errors.append(str(e)))
    p.page.set_default_timeout(15_000)
    yield p
    context.close()
