"""LibreTranslate's file API: over HTTP on a real server (uvicorn on 127.0.0.1, the echo
engine) as its web page sends a file (multipart, an empty api_key), answered when translated
with a URL that downloads it; its refusals in LibreTranslate's shape; and on the fake engine,
a deadline or a client that leaves stopping the job, a failure in LibreTranslate's shape, and
keys."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from dragoman.service.keys import add_key
from tests.fakes import FakeTranslator
from tests.unit.api.conftest import wait_for
from tests.unit.api.test_document_clients import TEXT, running


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with running(tmp_path_factory.mktemp("served")) as url:
        yield url


def lt_form(**fields: str) -> dict[str, str]:
    """As LibreTranslate's web page sends a file: multipart with an empty api_key."""
    return {"source": "en", "target": "de", "api_key": "", **fields}


def test_libretranslates_translate_file_and_download(server: str) -> None:
    r = httpx.post(
        f"{server}/translate_file",
        files={"file": ("notes.txt", TEXT.encode(), "text/plain")},
        data=lt_form(),
        timeout=30,
    )
    assert r.status_code == 200, r.text
    url = r.json()["translatedFileUrl"]
    assert url.startswith(f"{server}/download_file/") and url.endswith(".notes.txt")
    got = httpx.get(url)
    assert got.status_code == 200 and got.content == TEXT.encode()
    assert "attachment" in got.headers["content-disposition"]
    assert httpx.get(url[: -len(".notes.txt")] + "x.notes.txt").status_code == 404


def test_libretranslate_reports_files_in_its_settings(server: str) -> None:
    settings = httpx.get(f"{server}/frontend/settings").json()
    assert settings["filesTranslation"] is True
    assert ".txt" in settings["supportedFilesFormat"]


@pytest.mark.parametrize(
    ("name", "data", "fields", "status", "says"),
    [
        ("report.pdf", b"%PDF", {}, 400, "not a supported file type; supported: "),
        ("a.txt", b"\xff\xfe\x00", {}, 400, "not UTF-8"),
        ("a.txt", b"x" * 70_000, {}, 413, "the limit is 65536"),
        ("a.txt", b"Hello.", {"target": "xx"}, 400, "xx"),
    ],
)
def test_libretranslate_refusals_in_its_shape(
    server: str, name: str, data: bytes, fields: dict[str, str], status: int, says: str
) -> None:
    r = httpx.post(f"{server}/translate_file", files={"file": (name, data)}, data=lt_form(**fields))
    assert r.status_code == status, r.text
    assert list(r.json()) == ["error"] and says in r.json()["error"]


# -- on the fake engine ---------------------------------------------------------------------


async def test_a_deadline_stops_the_job_and_answers_504(
    client: httpx.AsyncClient, fake: FakeTranslator, app: Any
) -> None:
    fake.gate = asyncio.Event()
    r = await client.post(
        "/translate_file",
        files={"file": ("a.txt", b"Hello there.")},
        data=lt_form(),
        headers={"X-Request-Timeout": "0.3"},
    )
    assert r.status_code == 504 and "deadline" in r.json()["error"]
    assert fake.cancelled == 1 and fake.running == 0
    assert await app.state.jobs.store.records() == []


async def test_a_failed_file_is_answered_in_libretranslates_shape(
    client: httpx.AsyncClient, fake: FakeTranslator
) -> None:
    fake.max_words = 1
    r = await client.post(
        "/translate_file", files={"file": ("a.txt", b"Hello there.")}, data=lt_form()
    )
    # the job's own error, as LibreTranslate answers it (a text too long: 400)
    assert r.status_code == 400 and r.json() == {"error": "text is too long for the fake model"}


async def test_a_missing_key_or_file_is_400_and_a_bad_key_403(serve: Any, tmp_path: Path) -> None:
    path = tmp_path / "keys"
    key = add_key(path, "alice")
    async with serve(api_keys_file=path) as (_app, c):
        files = {"file": ("a.txt", b"Hello there.")}
        r = await c.post("/translate_file", files=files, data=lt_form())
        assert r.status_code == 400 and "API key" in r.json()["error"]
        r = await c.post("/translate_file", files=files, data=lt_form(api_key="wrong"))
        assert r.status_code == 403
        r = await c.post("/translate_file", data=lt_form(api_key=key))
        assert r.status_code == 400 and r.json() == {
            "error": "Invalid request: missing file parameter"
        }
        r = await c.post("/translate_file", files=files, data=lt_form(api_key=key))
        assert r.status_code == 200
        name = r.json()["translatedFileUrl"].rpartition("/")[2]
        r = await c.get(f"/download_file/{name}")  # the URL is the key: no api_key needed
        assert r.status_code == 200 and r.text == "[de] Hello there."


async def test_a_client_that_leaves_stops_the_job(app: Any, fake: FakeTranslator) -> None:
    fake.gate = asyncio.Event()
    body = (
        b'--b\r\nContent-Disposition: form-data; name="target"\r\n\r\nde\r\n'
        b'--b\r\nContent-Disposition: form-data; name="source"\r\n\r\nen\r\n'
        b'--b\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\n\r\n'
        b"Hello there.\r\n--b--\r\n"
    )
    gone = asyncio.Event()
    sent: list[dict[str, Any]] = []
    first = True

    async def receive() -> dict[str, Any]:
        nonlocal first
        if first:
            first = False
            return {"type": "http.request", "body": body, "more_body": False}
        await gone.wait()
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {
        "type": "http",
        "http_version": "1.1",
        "method": "POST",
        "path": "/translate_file",
        "raw_path": b"/translate_file",
        "query_string": b"",
        "root_path": "",
        "headers": [
            (b"host", b"test"),
            (b"content-type", b"multipart/form-data; boundary=b"),
            (b"content-length", str(len(body)).encode()),
        ],
        "client": ("127.0.0.1", 1234),
        "server": ("127.0.0.1", 80),
    }
    call = asyncio.create_task(app(scope, receive, send))
    await wait_for(lambda: fake.running == 1)
    gone.set()
    await asyncio.wait_for(call, timeout=5)
    assert fake.cancelled == 1 and fake.running == 0
    assert await app.state.jobs.store.records() == []
