"""Screenshots of the translate page and the dashboard for the README (docs/translate.png,
docs/dashboard.png), taken in Debian's headless chromium against a running server:

    .venv/bin/python scripts/screenshots.py --url http://127.0.0.1:8000

The dashboard is captured while a bounded load runs: a few clients, then more, so its lines
move. Start the server with `--cache-mib 0`, so that texts sent again reach the engine rather
than the cache. Needs the dev extra (Playwright) and `apt-get install chromium`."""

from __future__ import annotations

import argparse
import shutil
import threading
import time
from pathlib import Path

import httpx
from playwright.sync_api import expect, sync_playwright

from dragoman.eval import workloads


def load(url: str, clients: int, seconds: float, stop: threading.Event) -> None:
    """`clients` closed-loop clients for `seconds` (or until `stop`), on real workload texts."""
    items = workloads.build("variable", 1000, seed=clients)
    end = time.monotonic() + seconds

    def client(k: int) -> None:
        with httpx.Client(base_url=url, timeout=300) as c:
            i = k
            while not stop.is_set() and time.monotonic() < end:
                item = items[i % len(items)]
                body = {"text": item.text, "source_lang": item.source, "target_lang": item.target}
                c.post("/v1/translate", json=body)
                i += clients

    threads = [threading.Thread(target=client, args=(k,), daemon=True) for k in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--url", default="http://127.0.0.1:8000")
    ap.add_argument("--out", type=Path, default=Path("docs"))
    ap.add_argument(
        "--text",
        default="Thank you for coming today. The meeting starts at nine, "
        "and lunch is served in the garden.",
    )
    ap.add_argument("--phases", default="2x20,8x45", help="clients x seconds, comma separated")
    args = ap.parse_args()
    url = args.url.rstrip("/")
    args.out.mkdir(parents=True, exist_ok=True)
    chromium = shutil.which("chromium")
    if chromium is None:
        raise SystemExit("no chromium: apt-get install chromium")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium)
        page = browser.new_page(viewport={"width": 1280, "height": 640})
        page.goto(f"{url}/")
        expect(page.locator("#target option")).not_to_have_count(0)
        page.select_option("#source", "en")
        page.select_option("#target", "fr")
        page.fill("#text", args.text)
        page.keyboard.press("Control+Enter")
        expect(page.locator("#timing")).not_to_be_empty(timeout=300_000)
        page.screenshot(path=args.out / "translate.png")

        stop = threading.Event()
        phases = [(int(c), float(t)) for c, t in (x.split("x") for x in args.phases.split(","))]
        for clients, seconds in phases[:-1]:
            print(f"load: {clients} clients for {seconds:g} s", flush=True)
            load(url, clients, seconds, stop)
        clients, seconds = phases[-1]
        print(f"load: {clients} clients for {seconds:g} s, captured near its end", flush=True)
        last = threading.Thread(target=load, args=(url, clients, seconds, stop), daemon=True)
        last.start()
        last.join(timeout=max(1.0, seconds - 5))
        # The server keeps five minutes of history: the dashboard shows the whole load.
        page.set_viewport_size({"width": 1280, "height": 900})
        page.goto(f"{url}/dashboard")
        expect(page.locator("canvas[data-chart='Throughput']")).not_to_have_attribute(
            "data-points", "0"
        )
        page.screenshot(path=args.out / "dashboard.png", full_page=True)
        stop.set()
        last.join()
        browser.close()
    print(f"wrote {args.out / 'translate.png'} and {args.out / 'dashboard.png'}")


if __name__ == "__main__":
    main()
