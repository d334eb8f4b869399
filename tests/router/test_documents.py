"""Document jobs through the real `dragoman route` over two real echo servers: the upload is
routed by its pair, and the job's status, result and deletion reach the backend that holds it
whichever backend the proxy tries first (the others answer 404 document_not_found and are
passed over); an id no backend holds is a 404 in the surface's shape; a file past the route's
--max-file-bytes is refused at the proxy."""

from __future__ import annotations

import functools
from pathlib import Path

import deepl
import httpx

from dragoman.bench.servers import Launched, launch_echo
from tests.router._wait import until_sync
from tests.router.test_routing import start

TEXT = "The meeting starts at nine.\n\nLunch is served in the garden.\n"


def _fleet(logs: Path, stop_all: list[Launched], *extra: str) -> tuple[list[Launched], Launched]:
    backends = []
    for _ in range(2):
        b = launch_echo(logs, "en,fr,de", "--echo-delay", "0.01")
        stop_all.append(b)
        backends.append(b)
    return backends, start(logs, stop_all, *backends, extra=extra)


def test_native_jobs_are_followed_to_the_backend_that_holds_them(
    logs: Path, stop_all: list[Launched]
) -> None:
    backends, router = _fleet(logs, stop_all)
    files = {"file": ("notes.txt", TEXT.encode(), "text/plain")}
    form = {"target_lang": "fr", "source_lang": "en"}
    routed = httpx.post(f"{router.url}/v1/documents", files=files, data=form)
    assert routed.status_code == 202, routed.text
    assert routed.headers["x-dragoman-backend"] in ("b0", "b1")  # routed by its pair
    # A job on each backend, read through the proxy: whichever it tries first, the reads
    # reach the one that holds it.
    jobs = [routed.json()]
    for b in backends:
        r = httpx.post(f"{b.url}/v1/documents", files=files, data=form)
        assert r.status_code == 202, r.text
        jobs.append(r.json())
    for job in jobs:
        status = f"{router.url}/v1/documents/{job['id']}"
        done = until_sync(
            functools.partial(httpx.get, status),
            lambda r: r.status_code == 200 and r.json()["status"] == "done",
            "the job done, read through the proxy",
        )
        assert done.json()["segments_done"] == done.json()["segments_total"] >= 1
        result = httpx.get(f"{router.url}/v1/documents/{job['id']}/result")
        assert result.status_code == 200 and result.text == TEXT  # the echo engine's answer
        gone = httpx.delete(f"{router.url}/v1/documents/{job['id']}")
        assert gone.status_code in (200, 204), gone.text
        missing = httpx.get(f"{router.url}/v1/documents/{job['id']}")
        assert missing.status_code == 404
        assert missing.json()["error"]["code"] == "document_not_found"


def test_the_deepl_client_translates_a_document_through_the_proxy(
    logs: Path, stop_all: list[Launched], tmp_path: Path
) -> None:
    _, router = _fleet(logs, stop_all)
    source, out = tmp_path / "in.txt", tmp_path / "out.txt"
    source.write_text(TEXT)
    translator = deepl.Translator("x", server_url=router.url)
    for _ in range(3):  # whichever backend the upload reaches, its status and result follow
        out.unlink(missing_ok=True)
        status = translator.translate_document_from_filepath(
            source, out, source_lang="EN", target_lang="FR"
        )
        assert status.done and out.read_text() == TEXT


def test_an_upload_past_the_routes_file_bound_is_refused_at_the_proxy(
    logs: Path, stop_all: list[Launched]
) -> None:
    _, router = _fleet(logs, stop_all, "--max-file-bytes", "2048")
    files = {"file": ("big.txt", b"a " * 50_000, "text/plain")}
    r = httpx.post(f"{router.url}/v1/documents", files=files, data={"target_lang": "fr"})
    assert r.status_code == 413
    assert r.json()["error"]["code"] == "file_too_large"
    assert "x-dragoman-backend" not in r.headers  # never reached a backend
