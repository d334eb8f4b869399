"""The native document API on the fake engine: upload (202 and the job), progress as calls
finish, the result (409 until done), DELETE stopping the engine work, the refusals in the
native shape (a format no reader handles 415, a bad file 400, a file past --max-file-bytes 413
before its body is read), and who may read a job."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import httpx
import pytest

from dragoman.files import registry
from dragoman.service.keys import add_key
from tests.fakes import FakeTranslator
from tests.unit.api.conftest import wait_for
from tests.unit.jobs.conftest import SEGMENTS

TEXT = "Good morning. The weather is fine.\n\nSee you tomorrow.\n"


@pytest.fixture(autouse=True)
def segments_format(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(registry, "FORMATS", (*registry.FORMATS, SEGMENTS))


async def upload(c: httpx.AsyncClient, name: str, data: bytes, **fields: str) -> httpx.Response:
    form = {"target_lang": "fr", "source_lang": "en", **fields}
    return await c.post("/v1/documents", files={"file": (name, data)}, data=form)


async def poll(c: httpx.AsyncClient, handle: str, status: str = "done") -> dict[str, Any]:
    body: dict[str, Any] = {}

    async def check() -> bool:
        nonlocal body
        body = (await c.get(f"/v1/documents/{handle}")).json()
        return body["status"] == status

    for _ in range(1000):
        if await check():
            return body
        await asyncio.sleep(0.01)
    raise AssertionError(f"the job did not reach {status}: {body}")


async def test_upload_poll_fetch_delete(client: httpx.AsyncClient) -> None:
    r = await upload(client, "notes.txt", TEXT.encode())
    assert r.status_code == 202, r.text
    job = r.json()
    handle = job["id"]
    assert r.headers["location"] == f"/v1/documents/{handle}" == job["links"]["self"]
    assert job["filename"] == "notes.txt" and job["format"] == "txt"
    assert (job["segments_total"], job["target_lang"], job["source_lang"]) == (1, "fr", "en")
    done = await poll(client, handle)
    assert done["segments_done"] == 1 and done["billed_characters"] == len(TEXT)
    assert done["expires"] is not None and done["error"] is None
    r = await client.get(done["links"]["result"])
    assert r.status_code == 200
    assert r.text == "[fr] Good morning. [fr] The weather is fine.\n\n[fr] See you tomorrow.\n"
    assert r.headers["content-type"].startswith("text/plain")
    assert 'filename="notes.txt"' in r.headers["content-disposition"]
    assert (await client.delete(f"/v1/documents/{handle}")).status_code == 204
    r = await client.get(f"/v1/documents/{handle}")
    assert r.status_code == 404
    assert r.json()["error"]["code"] == "document_not_found"


async def test_progress_shows_as_calls_finish_and_the_result_waits(
    client: httpx.AsyncClient, fake: FakeTranslator
) -> None:
    slow = asyncio.Event()
    translate = fake.translate

    async def held(text: str, source: str, target: str, terms: Any = ()) -> Any:
        if "slow" in text:
            await slow.wait()
        return await translate(text, source, target, terms)

    fake.translate = held  # type: ignore[method-assign]
    doc = b"plain: One.\nplain: Two.\nplain: Three.\nxml: A <g1>slow</g1> one."
    handle = (await upload(client, "a.seg", doc)).json()["id"]
    part = await poll(client, handle, "translating")
    for _ in range(500):
        part = (await client.get(f"/v1/documents/{handle}")).json()
        if part["segments_done"] == 3:
            break
        await asyncio.sleep(0.01)
    assert (part["status"], part["segments_done"], part["segments_total"]) == ("translating", 3, 4)
    r = await client.get(f"/v1/documents/{handle}/result")
    assert r.status_code == 409
    assert r.json()["error"]["code"] == "document_not_ready"
    assert "3 of 4 segments" in r.json()["error"]["message"]
    slow.set()
    assert (await poll(client, handle))["segments_done"] == 4


async def test_delete_stops_a_running_job_in_the_engine(
    client: httpx.AsyncClient, fake: FakeTranslator
) -> None:
    fake.gate = asyncio.Event()
    handle = (await upload(client, "notes.txt", TEXT.encode())).json()["id"]
    await wait_for(lambda: fake.running == 3)
    assert (await client.delete(f"/v1/documents/{handle}")).status_code == 204
    assert fake.cancelled == 3 and fake.running == 0
    assert (await client.get(f"/v1/documents/{handle}")).status_code == 404


@pytest.mark.parametrize(
    ("name", "data", "fields", "status", "code", "says"),
    [
        ("report.pdf", b"%PDF", {}, 415, "unsupported_format", "supported: "),
        ("notes.txt", b"\xff\xfe\x00", {}, 400, "bad_file", "not UTF-8"),
        ("notes.txt", b"", {}, 400, "bad_file", "empty"),
        ("notes.txt", b"Hi.", {"target_lang": "xx"}, 400, "unsupported_language", "'xx'"),
        ("notes.txt", b"Hi.", {"glossary": "[1]"}, 422, "invalid_request", "glossary"),
        ("notes.txt", b"Hi.", {"quality": "perfect"}, 422, "invalid_request", "quality"),
    ],
)
async def test_refusals_at_upload_in_the_native_shape(
    client: httpx.AsyncClient,
    name: str,
    data: bytes,
    fields: dict[str, str],
    status: int,
    code: str,
    says: str,
) -> None:
    r = await upload(client, name, data, **fields)
    assert r.status_code == status, r.text
    assert r.json()["error"]["code"] == code
    assert says in r.json()["error"]["message"]


async def test_an_upload_without_a_file_or_a_target_is_422(client: httpx.AsyncClient) -> None:
    r = await client.post("/v1/documents", data={"target_lang": "fr"})
    assert r.status_code == 422 and "file" in r.json()["error"]["message"]
    r = await client.post("/v1/documents", files={"file": ("a.txt", b"Hi.")})
    assert r.status_code == 422 and "target_lang" in r.json()["error"]["message"]


async def test_uploads_have_their_own_bound_and_other_bodies_keep_theirs(serve: Any) -> None:
    async with serve(max_body_bytes=4096, max_file_bytes=8192) as (_app, c):
        r = await upload(c, "notes.txt", b"Hello there. " * 400)  # 5200 bytes: a file's
        assert r.status_code == 202, r.text
        r = await upload(c, "notes.txt", b"x" * 9000)
        assert r.status_code == 413 and r.json()["error"]["code"] == "file_too_large"
        r = await c.post("/v1/translate", json={"text": "x" * 5000, "target_lang": "fr"})
        assert r.status_code == 413 and r.json()["error"]["code"] == "body_too_large"
        r = await c.post("/translate_file", files={"file": ("a.txt", b"x" * 80_000)})
        assert r.status_code == 413 and "--max-file-bytes" in r.json()["error"]  # LT's shape


async def test_a_file_past_the_bound_is_refused_before_its_body_is_read(serve: Any) -> None:
    async with serve(max_file_bytes=1024) as (app, _c):
        sent: list[dict[str, Any]] = []

        async def receive() -> dict[str, Any]:
            raise AssertionError("the body was read")

        async def send(message: dict[str, Any]) -> None:
            sent.append(message)

        scope = {
            "type": "http",
            "http_version": "1.1",
            "method": "POST",
            "path": "/v1/documents",
            "raw_path": b"/v1/documents",
            "query_string": b"",
            "root_path": "",
            "headers": [
                (b"host", b"test"),
                (b"content-type", b"multipart/form-data; boundary=x"),
                (b"content-length", str(50 * 2**20).encode()),
            ],
            "client": ("127.0.0.1", 1234),
            "server": ("127.0.0.1", 80),
        }
        await app(scope, receive, send)
        assert sent[0]["status"] == 413
        assert b"file_too_large" in sent[1]["body"]


async def test_with_keys_on_a_job_is_read_by_its_handle_or_by_the_key_that_sent_it(
    serve: Any, tmp_path: Path
) -> None:
    path = tmp_path / "keys"
    alice = {"authorization": f"Bearer {add_key(path, 'alice')}"}
    bob = {"authorization": f"Bearer {add_key(path, 'bob')}"}
    async with serve(api_keys_file=path) as (_app, c):
        r = await c.post(
            "/v1/documents",
            files={"file": ("a.txt", b"Hello.")},
            data={"target_lang": "fr", "source_lang": "en"},
        )
        assert r.status_code == 401
        r = await c.post(
            "/v1/documents",
            files={"file": ("a.txt", b"Hello.")},
            data={"target_lang": "fr", "source_lang": "en"},
            headers=alice,
        )
        handle = r.json()["id"]
        bare = handle[:22]
        assert (await c.get(f"/v1/documents/{bare}", headers=alice)).status_code == 200
        assert (await c.get(f"/v1/documents/{bare}", headers=bob)).status_code == 404
        assert (await c.get(f"/v1/documents/{handle}", headers=bob)).status_code == 200
        assert (await c.delete(f"/v1/documents/{bare}", headers=bob)).status_code == 404
        assert (await c.delete(f"/v1/documents/{bare}", headers=alice)).status_code == 204
