"""The dashboard at /dashboard in a real browser: it follows a bounded load on a real echo
server, asks for the metrics key when one is set, and on `dragoman route` shows every
backend."""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import expect

from dragoman.bench.servers import Launched, launch_echo, launch_router
from tests.web._browser import Page
from tests.web.conftest import LANGUAGES

pytestmark = pytest.mark.browser


@contextmanager
def bounded_load(
    url: str, clients: int = 4, most: int = 2000, seconds: float = 60
) -> Iterator[None]:
    """Closed-loop clients on the server until the block ends, at most `most` requests or
    `seconds`, whichever comes first."""
    stop = threading.Event()
    sent = iter(range(most))
    lock = threading.Lock()
    end = time.monotonic() + seconds

    def client() -> None:
        with httpx.Client(base_url=url, timeout=10) as c:
            while not stop.is_set() and time.monotonic() < end:
                with lock:
                    i = next(sent, None)
                if i is None:
                    return
                c.post(
                    "/v1/translate",
                    json={
                        "text": f"Sentence number {i}.",
                        "source_lang": "en",
                        "target_lang": "fr",
                    },
                )

    threads = [threading.Thread(target=client, daemon=True) for _ in range(clients)]
    for t in threads:
        t.start()
    try:
        yield
    finally:
        stop.set()
        for t in threads:
            t.join(timeout=15)


def canvas_image(p: Page, title: str) -> str:
    return str(
        p.page.evaluate(
            "(t) => document.querySelector(`canvas[data-chart^='${t}']`).toDataURL()", title
        )
    )


def tile(p: Page, label: str):  # type: ignore[no-untyped-def]
    return p.page.locator(f".tile[data-tile='{label}'] .value")


def test_dashboard_charts_move_while_a_bounded_load_runs(page: Page, echo: Launched) -> None:
    page.page.goto(f"{echo.url}/dashboard")
    throughput = page.page.locator("canvas[data-chart='Throughput']")
    expect(throughput).to_have_attribute("data-points", re.compile(r"^[1-9]"))
    expect(page.page.locator("#status")).to_contain_text("engine ready")
    before = {t: canvas_image(page, t) for t in ("Throughput", "Output tokens/s", "Latency")}
    with bounded_load(echo.url):
        expect(throughput).not_to_have_attribute("data-max", "0")
        latency = page.page.locator("canvas[data-chart^='Latency']")
        expect(latency).not_to_have_attribute("data-max", "0")
        expect(tile(page, "Requests/s")).not_to_have_text("0.0")
        expect(tile(page, "Inference p99")).to_contain_text("ms")
    after = {t: canvas_image(page, t) for t in before}
    for title in before:
        assert after[title] != before[title], f"the {title} chart did not change"
    assert page.errors == []


def test_dashboard_asks_for_the_metrics_key(
    page: Page, logs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DRAGOMAN_METRICS_KEY", "m-key")
    server = launch_echo(logs, LANGUAGES)
    try:
        page.page.goto(f"{server.url}/dashboard")
        expect(page.page.locator("#key-form")).to_be_visible()
        expect(page.page.locator("#error")).to_have_text(
            "This endpoint needs Authorization: Bearer <metrics key>"
        )
        page.page.fill("#metrics-key", "m-key")
        page.page.keyboard.press("Enter")
        expect(page.page.locator("#status")).to_contain_text("engine ready")
        expect(page.page.locator("#error")).to_be_hidden()
        expect(tile(page, "Requests/s")).to_have_text("0.0")
    finally:
        server.stop()
    # A 401 on the first poll is the only console error allowed: the browser logs it itself.
    assert all("401" in e for e in page.errors)


def test_router_pages_translate_through_the_proxy_and_show_every_backend(
    page: Page, logs: Path
) -> None:
    backends = [launch_echo(logs, LANGUAGES, "--echo-delay", "0.02") for _ in range(2)]
    checks = ("--check-interval", "0.2", "--fail-threshold", "1", "--recover-threshold", "1")
    router = launch_router(logs, "--backend-urls", ",".join(b.url for b in backends), *checks)
    try:
        page.page.goto(f"{router.url}/")
        expect(page.page.locator("#source option")).to_have_count(4)  # detect + 3 from pairs
        page.page.select_option("#source", "en")
        page.page.select_option("#target", "de")
        page.page.fill("#text", "Through the proxy.")
        page.page.keyboard.press("Control+Enter")
        expect(page.page.locator("#result")).to_have_text("Through the proxy.")

        page.page.goto(f"{router.url}/dashboard")
        rows = page.page.locator("#backends tbody tr")
        expect(rows).to_have_count(2)
        expect(rows.nth(0)).to_contain_text("healthy")
        expect(rows.nth(1)).to_contain_text("healthy")
        with bounded_load(router.url):
            chart = page.page.locator("canvas[data-chart='Requests/s per backend']")
            expect(chart).not_to_have_attribute("data-max", "0")
        backends[1].stop()
        expect(rows.nth(1)).to_contain_text("out")
        assert page.errors == []
    finally:
        router.stop()
        for b in backends:
            b.stop()


def test_chart_axis_labels_keep_their_fractions_and_an_outage_is_a_gap(
    page: Page, echo: Launched
) -> None:
    """The whole-number charts labelled a top of 6 as 0, 2, 3, 5, 6 (1.5 and 4.5 rounded),
    and a line was drawn straight across the seconds the server did not answer."""
    page.page.goto(f"{echo.url}/dashboard")
    drawn = page.page.evaluate(
        """() => {
          const canvas = document.createElement("canvas");
          canvas.style.width = "400px"; canvas.style.height = "120px";
          document.body.append(canvas);
          const chart = new LineChart(canvas, document.createElement("div"), {
            series: [{ label: "requests", color: "red", get: (p) => p.v }], digits: 0,
          });
          const points = [0, 1, 2, 3, 13, 14, 15].map((t) => ({ t: 1000 + t, v: 5.5 }));
          chart.draw(points);
          return [canvas.dataset.ticks, canvas.dataset.runs];
        }"""
    )
    assert drawn == ["0 1.5 3 4.5 6", "2"]  # two stretches: the 10 s without points is a gap
