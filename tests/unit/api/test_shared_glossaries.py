"""DeepL's stored glossaries in a Redis-protocol store (--glossary-url) at the HTTP layer, on a
real store and the fake engine: two servers given the store share them (and name the same
store in /ready), keys keep theirs apart, and a store that is down is a 503 in DeepL's shape
for glossary requests only, and counted (dragoman_glossary_store_errors_total)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic import ValidationError
from redis import Redis

from dragoman.bench.servers import free_port
from dragoman.bench.store import Store
from dragoman.service.keys import add_key
from dragoman.service.settings import ServeSettings
from tests.stores import running_store

CREATE = {"name": "ui", "source_lang": "en", "target_lang": "de", "entries": "Save\tSpeichern"}


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Store]:
    yield from running_store(tmp_path_factory)


@pytest.fixture
def emptied(store: Store) -> Store:
    with Redis.from_url(store.url) as raw:
        raw.flushdb()
    return store


def translate(glossary_id: str | None) -> dict[str, object]:
    body: dict[str, object] = {"text": ["Save it."], "source_lang": "EN", "target_lang": "DE"}
    return body if glossary_id is None else {**body, "glossary_id": glossary_id}


async def test_two_servers_given_the_store_share_glossaries_and_keys_keep_theirs(
    serve, emptied: Store, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "keys"
    one = {"authorization": f"DeepL-Auth-Key {add_key(path, 'one')}"}
    two = {"authorization": f"DeepL-Auth-Key {add_key(path, 'two')}"}
    settings = {"glossary_url": emptied.url, "api_keys_file": path}
    async with serve(**settings) as (_a, a), serve(**settings) as (_b, b):
        ids = {(await c.get("/ready")).json()["glossary_store"] for c in (a, b)}
        assert len(ids) == 1 and None not in ids
        r = await a.post("/v2/glossaries", json=CREATE, headers=one)
        assert r.status_code == 201, r.text
        gid = r.json()["glossary_id"]
        r = await b.get(f"/v2/glossaries/{gid}/entries", headers=one)
        assert r.text == "Save\tSpeichern\n"
        assert r.headers["content-type"].startswith("text/tab-separated-values")
        r = await b.post("/v2/translate", json=translate(gid), headers=one)
        assert r.status_code == 200, r.text
        assert "Speichern" in r.json()["translations"][0]["text"]  # the fake honours terms
        listed = (await b.get("/v2/glossaries", headers=one)).json()["glossaries"]
        assert [(g["glossary_id"], g["entry_count"]) for g in listed] == [(gid, 1)]
        for ask in (  # another key's: as never made, on either server
            b.get(f"/v2/glossaries/{gid}", headers=two),
            b.delete(f"/v2/glossaries/{gid}", headers=two),
            b.post("/v2/translate", json=translate(gid), headers=two),
        ):
            assert (await ask).status_code == 404
        assert (await a.get("/v2/glossaries", headers=two)).json() == {"glossaries": []}
        assert (await b.delete(f"/v2/glossaries/{gid}", headers=one)).status_code == 204
        # a used it (parsed, indexed): deleted through b, it is gone on a at once
        r = await a.post("/v2/translate", json=translate(gid), headers=one)
        assert r.status_code == 404 and "not found" in r.json()["message"]
        assert (await a.get(f"/v2/glossaries/{gid}", headers=one)).status_code == 404


async def test_a_store_that_is_down_is_a_503_for_glossaries_only(serve) -> None:  # type: ignore[no-untyped-def]
    url = f"redis://127.0.0.1:{free_port()}/0"  # nothing listens there
    auth = {"authorization": "DeepL-Auth-Key x"}
    gid = "0" * 8 + "-0000-4000-8000-" + "0" * 12
    async with serve(glossary_url=url) as (_app, c):
        ready = await c.get("/ready")
        assert ready.status_code == 200 and ready.json()["glossary_store"] is None
        for ask in (
            c.post("/v2/glossaries", json=CREATE, headers=auth),
            c.get("/v2/glossaries", headers=auth),
            c.get(f"/v2/glossaries/{gid}", headers=auth),
            c.get(f"/v2/glossaries/{gid}/entries", headers=auth),
            c.delete(f"/v2/glossaries/{gid}", headers=auth),
            c.post("/v2/translate", json=translate(gid), headers=auth),
        ):
            r = await ask
            assert r.status_code == 503, r.text
            assert "the glossary store does not answer" in r.json()["message"]
            assert r.headers["x-dragoman-error"] == "glossary_store_error"
        r = await c.post("/v2/translate", json=translate(None), headers=auth)
        assert r.status_code == 200, r.text
        exposition = (await c.get("/metrics")).text
    counts = {
        kind: float(line.rsplit(" ", 1)[1])
        for line in exposition.splitlines()
        for kind in ("read", "write", "invalid")
        if line.startswith(f'dragoman_glossary_store_errors_total{{kind="{kind}"}} ')
    }
    # the create is the one write; /ready's background reads of the store's id count too
    assert counts["write"] == 1 and counts["read"] >= 5 and counts["invalid"] == 0, counts


def test_one_place_for_glossaries_and_the_url_from_the_environment(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    with pytest.raises(ValidationError, match="give one"):
        ServeSettings(glossary_dir=tmp_path, glossary_url="redis://127.0.0.1:6379/0")
    with pytest.raises(ValidationError, match="redis://"):
        ServeSettings(glossary_url="http://127.0.0.1:6379")
    monkeypatch.setenv("DRAGOMAN_GLOSSARY_URL", "redis://:secret@store:6379/2")
    assert ServeSettings().glossary_url == "redis://:secret@store:6379/2"
