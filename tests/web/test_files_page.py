"""The files page at /files in a real browser, against a real echo server (which answers with
the text itself): a chosen file is uploaded to /v1/documents, its progress followed to done,
and the translated file downloaded; a file type no reader handles is refused with the
server's message naming the supported ones."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import expect

from dragoman.bench.servers import Launched, launch_echo
from tests.web._browser import Page

pytestmark = pytest.mark.browser

TEXT = "The meeting starts at nine.\n\nLunch is served in the garden.\n"


@pytest.fixture(scope="module")
def files_echo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Launched]:
    """An echo server answering after 20 ms, storing documents in a temporary folder."""
    folder = tmp_path_factory.mktemp("files-echo")
    server = launch_echo(folder, "en,fr,de", "--echo-delay", "0.02")
    yield server
    server.stop()


def open_files(p: Page, url: str) -> None:
    p.page.goto(f"{url}/files")
    expect(p.page).to_have_title("dragoman: files")
    expect(p.page.locator("#target option")).not_to_have_count(0)  # languages loaded


def test_a_file_is_uploaded_followed_to_done_and_downloaded(
    page: Page, files_echo: Launched, tmp_path: Path
) -> None:
    open_files(page, files_echo.url)
    expect(page.page.locator("#formats")).to_contain_text(".txt")  # from /frontend/settings
    page.page.select_option("#source", "en")
    page.page.select_option("#target", "fr")
    sample = tmp_path / "notes.txt"
    sample.write_text(TEXT)
    page.page.set_input_files("#file", str(sample))
    row = page.page.locator("#jobs tbody tr").first
    expect(row.locator("td").first).to_have_text("notes.txt")
    expect(row.locator(".status")).to_contain_text("Done", timeout=30_000)
    progress = row.locator("progress")
    assert progress.evaluate("p => p.value === p.max && p.max >= 1")
    with page.page.expect_download() as info:
        row.locator("a.download").click()
    download = info.value
    assert download.suggested_filename == "notes.txt"
    assert Path(download.path()).read_text() == TEXT  # the echo engine answers with the text
    expect(page.page.locator("#error")).to_be_hidden()
    assert page.errors == []


def test_an_unsupported_file_type_is_refused_naming_the_supported_ones(
    page: Page, files_echo: Launched, tmp_path: Path
) -> None:
    open_files(page, files_echo.url)
    sample = tmp_path / "program.exe"
    sample.write_bytes(b"MZ\x90\x00")
    page.page.set_input_files("#file", str(sample))
    status = page.page.locator("#jobs tbody tr .status").first
    expect(status).to_contain_text("Failed:")
    expect(status).to_contain_text(".txt")  # the message names what is supported
    # the page's own scripts raised nothing (the 415 itself is logged by chromium as a failed
    # resource load, which is not a script error)
    assert [e for e in page.errors if "415" not in e] == []
