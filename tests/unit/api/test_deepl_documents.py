"""DeepL's document API on the fake engine: the key checked as on DeepL's other routes, a
stored glossary used for the document, the result 503 while not ready (the client's
DocumentNotReadyException), and the status fields the client reads."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import httpx

from dragoman.service.keys import add_key
from tests.fakes import FakeTranslator
from tests.unit.api.conftest import wait_for


async def upload(c: httpx.AsyncClient, headers: dict[str, str], **fields: str) -> httpx.Response:
    form = {"target_lang": "DE", "source_lang": "EN", "formality": "default", **fields}
    files = {"file": ("notes.txt", b"Save the file. Then close it.")}
    return await c.post("/v2/document", files=files, data=form, headers=headers)


async def test_the_key_is_checked_and_the_sender_reads_without_the_document_key(
    serve: Any, tmp_path: Path
) -> None:
    path = tmp_path / "keys"
    alice = {"authorization": f"DeepL-Auth-Key {add_key(path, 'alice')}"}
    bob = {"authorization": f"DeepL-Auth-Key {add_key(path, 'bob')}"}
    async with serve(api_keys_file=path) as (_app, c):
        r = await upload(c, {})
        assert r.status_code == 403 and "DeepL-Auth-Key" in r.json()["message"]
        r = await upload(c, alice)
        assert r.status_code == 200, r.text
        doc = r.json()
        assert set(doc) == {"document_id", "document_key"}
        path_ = f"/v2/document/{doc['document_id']}"
        r = await c.post(path_, json={"document_key": doc["document_key"]})
        assert r.status_code == 403  # the key, as on every DeepL route
        for who, body, status in (
            (alice, {}, 200),
            (bob, {}, 404),
            (bob, {"document_key": doc["document_key"]}, 200),
            (bob, {"document_key": "x" * 43}, 404),
        ):
            r = await c.post(path_, json=body, headers=who)
            assert r.status_code == status, (who, body, r.text)
        r = await c.post(path_, data={"document_key": doc["document_key"]}, headers=bob)
        assert r.status_code == 200  # a form body too


async def test_status_fields_and_the_result_503_until_done(
    client: httpx.AsyncClient, fake: FakeTranslator
) -> None:
    fake.gate = asyncio.Event()
    doc = (await upload(client, {})).json()
    key = {"document_key": doc["document_key"]}
    path = f"/v2/document/{doc['document_id']}"
    await wait_for(lambda: fake.running == 1)  # short and on one line: one engine request
    r = await client.post(path, json=key)
    assert r.json() == {"document_id": doc["document_id"], "status": "translating"}
    r = await client.post(f"{path}/result", json=key)
    assert r.status_code == 503 and "not translated yet" in r.json()["message"]
    fake.gate.set()
    for _ in range(500):
        status = (await client.post(path, json=key)).json()
        if status["status"] == "done":
            break
        await asyncio.sleep(0.01)
    assert status == {
        "document_id": doc["document_id"],
        "status": "done",
        "billed_characters": len("Save the file. Then close it."),
    }
    r = await client.post(f"{path}/result", json=key)
    assert r.status_code == 200 and r.text == "[de] Save the file. Then close it."


async def test_a_stored_glossary_is_used_for_the_document(client: httpx.AsyncClient) -> None:
    made = await client.post(
        "/v2/glossaries",
        json={"name": "ui", "source_lang": "en", "target_lang": "de", "entries": "Save\tSpeichern"},
    )
    gid = made.json()["glossary_id"]
    r = await upload(client, {}, source_lang="", glossary_id=gid)
    assert r.status_code == 400 and "requires the source_lang" in r.json()["message"]
    r = await upload(client, {}, target_lang="FR", glossary_id=gid)
    assert r.status_code == 400 and "en->de, not en->fr" in r.json()["message"]
    doc = (await upload(client, {}, glossary_id=gid)).json()
    key = {"document_key": doc["document_key"]}
    path = f"/v2/document/{doc['document_id']}"
    for _ in range(500):
        if (await client.post(path, json=key)).json()["status"] == "done":
            break
        await asyncio.sleep(0.01)
    r = await client.post(f"{path}/result", json=key)
    assert r.text == "[de] Speichern the file. Then close it."


async def test_a_failed_document_says_why(client: httpx.AsyncClient, fake: FakeTranslator) -> None:
    fake.max_words = 1
    doc = (await upload(client, {})).json()
    path = f"/v2/document/{doc['document_id']}"
    for _ in range(500):
        status = (await client.post(path, json={"document_key": doc["document_key"]})).json()
        if status["status"] == "error":
            break
        await asyncio.sleep(0.01)
    assert status["error_message"] == "text is too long for the fake model"
