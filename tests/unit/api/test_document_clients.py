"""The document APIs over HTTP on a real server (uvicorn on 127.0.0.1, the echo engine), as
their clients call them: the `deepl` client's `translate_document_from_filepath` unchanged,
and the native `/v1/documents` with progress and DELETE; each surface's refusals in its own
shape. LibreTranslate's file API: test_libretranslate_files.py."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import deepl
import httpx
import pytest
import uvicorn

from dragoman.api.app import build_app
from dragoman.api.serve import open_translator
from dragoman.bench.servers import free_port
from dragoman.service.settings import ServeSettings

TEXT = "Good morning. The weather is fine today.\n\nSee you tomorrow, at the station.\n"


def until(check: Callable[[], bool], seconds: float = 30.0) -> None:
    end = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < end, "the condition did not come true in time"
        time.sleep(0.02)


@contextmanager
def running(tmp: Path, **overrides: Any) -> Iterator[str]:
    """A server on the echo engine in a thread, stopped on the way out."""
    port = free_port()
    settings = ServeSettings(
        **{
            "data_dir": tmp,
            "port": port,
            "architecture": "echo",
            "echo_delay": 0.01,
            "retry_invalid": False,  # the echo's text is the source's: no check to fail
            "log_level": "warning",
            "gc_freeze": False,
            "max_file_bytes": 64 * 1024,
            **overrides,
        }
    )
    app = build_app(settings, lambda: open_translator(settings, ("en", "fr", "de")))
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on")
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{port}"

    def ready() -> bool:
        try:
            return httpx.get(f"{url}/ready", timeout=5).status_code == 200
        except httpx.TransportError:
            return False

    until(lambda: ready() or not thread.is_alive())
    assert thread.is_alive()
    try:
        yield url
    finally:
        server.should_exit = True
        thread.join(timeout=30)
        assert not thread.is_alive()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with running(tmp_path_factory.mktemp("served")) as url:
        yield url


# -- DeepL ---------------------------------------------------------------------------------


def test_the_deepl_clients_translate_document_from_filepath(server: str, tmp_path: Path) -> None:
    source, out = tmp_path / "notes.txt", tmp_path / "notes.de.txt"
    source.write_text(TEXT)
    client = deepl.Translator("any-key", server_url=server)
    status = client.translate_document_from_filepath(source, out, target_lang="DE")
    assert status.done and status.ok
    assert status.billed_characters == len(TEXT)
    assert out.read_text() == TEXT  # the echo engine answers each sentence with itself


def test_the_deepl_clients_upload_status_and_download(server: str) -> None:
    client = deepl.Translator("any-key", server_url=server)
    handle = client.translate_document_upload(
        TEXT.encode(), target_lang="FR", source_lang="EN", filename="a.txt"
    )
    until(lambda: client.translate_document_get_status(handle).done)
    response = client.translate_document_download(handle)
    assert response is not None and response.content == TEXT.encode()
    assert response.headers["content-type"].startswith("text/plain")
    wrong = deepl.DocumentHandle(handle.document_id, "x" * 43)
    with pytest.raises(deepl.DeepLException, match="Not found"):
        client.translate_document_get_status(wrong)


@pytest.mark.parametrize(
    ("name", "data", "kwargs", "says"),
    [
        ("report.pdf", b"%PDF-1.7", {}, r"supported: .*\.txt"),
        ("a.txt", b"\xff\xfe\x00", {}, "not UTF-8"),
        ("a.txt", b"Hello.", {"output_format": "docx"}, "output_format 'docx' is not supported"),
        ("a.txt", b"Hello.", {"glossary": "no-such-glossary"}, "not found"),
        ("a.txt", b"Hello.", {"formality": "more"}, "formality 'more'"),
    ],
)
def test_the_deepl_client_sees_refusals_as_bad_requests(
    server: str, name: str, data: bytes, kwargs: dict[str, Any], says: str
) -> None:
    client = deepl.Translator("any-key", server_url=server)
    with pytest.raises(deepl.DeepLException, match=says):
        client.translate_document_upload(
            data, target_lang="DE", source_lang="EN", filename=name, **kwargs
        )


def test_deepl_refusals_in_its_shape(server: str) -> None:
    auth = {"authorization": "DeepL-Auth-Key x"}
    r = httpx.post(
        f"{server}/v2/document",
        files={"file": ("a.pdf", b"%PDF")},
        data={"target_lang": "DE"},
        headers=auth,
    )
    assert r.status_code == 400 and ".txt" in r.json()["message"].partition("supported: ")[2]
    r = httpx.post(
        f"{server}/v2/document",
        files={"file": ("a.txt", b"x" * 70_000)},
        data={"target_lang": "DE"},
        headers=auth,
    )
    assert r.status_code == 413 and "the limit is 65536" in r.json()["message"]
    r = httpx.post(f"{server}/v2/document", data={"target_lang": "DE"}, headers=auth)
    assert r.status_code == 400 and r.json() == {"message": "Parameter 'file' not specified."}
    r = httpx.post(f"{server}/v2/document/{'A' * 22}", json={"document_key": "k" * 43})
    assert r.status_code == 404 and "message" in r.json()


# -- native --------------------------------------------------------------------------------


def test_native_progress_result_and_delete_over_http(tmp_path: Path) -> None:
    with running(tmp_path, echo_delay=1.0) as url:
        upload = {"files": {"file": ("notes.txt", TEXT.encode())}}
        form = {"target_lang": "de", "source_lang": "en"}
        r = httpx.post(f"{url}/v1/documents", data=form, **upload)  # type: ignore[arg-type]
        assert r.status_code == 202, r.text
        job = r.json()
        assert (job["segments_total"], job["segments_done"]) == (1, 0)
        seen: list[dict[str, Any]] = []

        def finished() -> bool:
            seen.append(httpx.get(f"{url}{job['links']['self']}").json())
            return seen[-1]["status"] == "done"

        until(finished)
        assert any(s["status"] == "translating" and s["segments_done"] == 0 for s in seen)
        assert seen[-1]["segments_done"] == 1
        r = httpx.get(f"{url}{job['links']['result']}")
        assert r.status_code == 200 and r.content == TEXT.encode()

        other = {"file": ("other.txt", b"Another text, not in the cache yet.")}
        r = httpx.post(f"{url}/v1/documents", data=form, files=other)
        handle = r.json()["id"]
        until(lambda: httpx.get(f"{url}/v1/documents/{handle}").json()["status"] == "translating")
        r = httpx.get(f"{url}/v1/documents/{handle}/result")
        assert r.status_code == 409 and r.json()["error"]["code"] == "document_not_ready"
        assert httpx.delete(f"{url}/v1/documents/{handle}").status_code == 204
        assert httpx.get(f"{url}/v1/documents/{handle}").status_code == 404
        metrics = httpx.get(f"{url}/metrics").text
        aborted = [
            line for line in metrics.splitlines() if line.startswith("dragoman_aborted_total")
        ]
        assert aborted and float(aborted[0].split()[-1]) >= 1  # its sentences, in the engine


@pytest.mark.parametrize(
    ("name", "data", "status", "code"),
    [
        ("report.pdf", b"%PDF", 415, "unsupported_format"),
        ("a.txt", b"\xff\xfe\x00", 400, "bad_file"),
        ("a.txt", b"x" * 70_000, 413, "file_too_large"),
    ],
)
def test_native_refusals_in_its_shape(
    server: str, name: str, data: bytes, status: int, code: str
) -> None:
    r = httpx.post(
        f"{server}/v1/documents", files={"file": (name, data)}, data={"target_lang": "de"}
    )
    assert r.status_code == status
    assert r.json()["error"]["code"] == code
