"""Make a benchmark watchable: say where the dashboard of the server under test is, and open
it in a browser when asked."""

from __future__ import annotations

import webbrowser

from rich.console import Console


def announce(console: Console, url: str, open_browser: bool) -> None:
    dashboard = f"{url}/dashboard"
    console.log(f"[bold]watch it live: {dashboard}[/bold]")
    if open_browser and not webbrowser.open(dashboard):
        console.log("no browser to open here: open the address above")
