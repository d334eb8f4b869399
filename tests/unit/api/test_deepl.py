"""DeepL's v2 surface at the HTTP layer (fake engine, real detector)."""

from __future__ import annotations

import asyncio
import re
import uuid
from pathlib import Path
from urllib.parse import urlencode

import httpx

from dragoman.service.keys import add_key
from tests.fakes import FakeTranslator

AUTH = {"authorization": "DeepL-Auth-Key anything"}


async def test_translate_json(client: httpx.AsyncClient) -> None:
    body = {"text": ["Hello", "World"], "target_lang": "fr", "show_billed_characters": True}
    r = await client.post("/v2/translate", json={**body, "source_lang": "EN"}, headers=AUTH)
    assert r.status_code == 200, r.text
    assert r.json() == {
        "translations": [
            {"detected_source_language": "EN", "text": "[fr] Hello", "billed_characters": 5},
            {"detected_source_language": "EN", "text": "[fr] World", "billed_characters": 5},
        ]
    }


async def test_translate_form_with_detection(client: httpx.AsyncClient) -> None:
    form = [
        ("text", "Guten Morgen, wie geht es Ihnen heute?"),
        ("text", "Good morning, how are you doing today?"),
        ("target_lang", "FR"),
        ("formality", "prefer_more"),  # accepted, no effect
        ("split_sentences", "1"),
    ]
    r = await client.post(
        "/v2/translate",
        content=urlencode(form),
        headers={**AUTH, "content-type": "application/x-www-form-urlencoded"},
    )
    assert r.status_code == 200, r.text
    got = [t["detected_source_language"] for t in r.json()["translations"]]
    assert got == ["DE", "EN"]


async def test_regional_targets(client: httpx.AsyncClient) -> None:
    for code in ("EN-US", "en-gb", "ZH-HANS"):
        body = {"text": ["Bonjour"], "target_lang": code, "source_lang": "FR"}
        r = await client.post("/v2/translate", json=body, headers=AUTH)
        assert r.status_code == 200, (code, r.text)
    r = await client.post(
        "/v2/translate", json={"text": ["x"], "target_lang": "ZH-HANT"}, headers=AUTH
    )
    assert (r.status_code, r.json()) == (400, {"message": "Value for 'target_lang' not supported."})


async def test_a_regional_variant_is_no_source(client: httpx.AsyncClient) -> None:
    """DeepL's sources are languages (EN: "all English variants"); a target-only variant
    as source_lang is 400 "Value for 'source_lang' not supported." there. It was taken here
    as English, and a client that worked against dragoman failed against DeepL."""
    for code in ("EN-GB", "en-us", "PT-BR", "PT-PT", "ZH-HANS", "ES-419"):
        body = {"text": ["Hello"], "target_lang": "FR", "source_lang": code}
        r = await client.post("/v2/translate", json=body, headers=AUTH)
        assert (r.status_code, r.json()) == (
            400,
            {"message": "Value for 'source_lang' not supported."},
        ), code
    for code in ("EN", "en", "ZH"):  # the languages themselves
        body = {"text": ["Bonjour"], "target_lang": "DE", "source_lang": code}
        r = await client.post("/v2/translate", json=body, headers=AUTH)
        assert r.status_code == 200, (code, r.text)
    # still targets
    body = {"text": ["Bonjour"], "target_lang": "EN-GB", "source_lang": "FR"}
    r = await client.post("/v2/translate", json=body, headers=AUTH)
    assert r.status_code == 200, r.text


async def test_refused_options_and_errors(client: httpx.AsyncClient) -> None:
    base = {"text": ["Hello"], "target_lang": "DE"}
    for extra in (
        {"formality": "more"},
        {"glossary_id": "abc"},
        {"tag_handling": "pdf"},
        {"custom_instructions": ["be brief"]},
    ):
        r = await client.post("/v2/translate", json={**base, **extra}, headers=AUTH)
        assert r.status_code == 400 and isinstance(r.json()["message"], str), extra
    r = await client.post("/v2/translate", json={**base, "some_future_option": 1}, headers=AUTH)
    assert r.status_code == 200  # unknown options are ignored
    r = await client.post("/v2/translate", json={"target_lang": "DE"}, headers=AUTH)
    assert (r.status_code, r.json()) == (400, {"message": "Parameter 'text' not specified."})
    r = await client.post("/v2/translate", json={"text": "Hi"}, headers=AUTH)
    assert r.status_code == 400 and "target_lang" in r.json()["message"]


async def test_languages_source_and_target(client: httpx.AsyncClient) -> None:
    r = await client.get("/v2/languages", headers=AUTH)
    assert {x["language"] for x in r.json()} == {"EN", "FR", "DE", "ZH"}
    r = await client.request(  # the deepl client's way: a form body on a GET
        "GET",
        "/v2/languages",
        content=b"type=target",
        headers={**AUTH, "content-type": "application/x-www-form-urlencoded"},
    )
    targets = {x["language"] for x in r.json()}
    assert {"EN-GB", "EN-US", "ZH-HANS", "FR", "DE"} <= targets and "EN" not in targets
    r = await client.get("/v2/languages", params={"type": "target"}, headers=AUTH)
    assert {x["language"] for x in r.json()} == targets
    assert all(x["supports_formality"] is False for x in r.json())
    r = await client.get("/v2/languages", params={"type": "bogus"}, headers=AUTH)
    assert r.status_code == 400 and "'type'" in r.json()["message"]


async def test_keys_usage_and_day_quota(serve, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "keys"
    key = add_key(path, "app")
    async with serve(api_keys_file=path, key_chars_per_day=12) as (_app, c):
        body = {"text": ["Hello", "World"], "target_lang": "DE", "source_lang": "EN"}
        r = await c.post("/v2/translate", json=body)
        assert r.status_code == 403 and "DeepL-Auth-Key" in r.json()["message"]
        r = await c.post("/v2/translate", json=body, headers={"authorization": "DeepL-Auth-Key x"})
        assert (r.status_code, r.json()) == (403, {"message": "the API key is not valid"})
        good = {"authorization": f"DeepL-Auth-Key {key}"}
        assert (await c.post("/v2/translate", json=body, headers=good)).status_code == 200
        r = await c.get("/v2/usage", headers=good)
        assert r.json() == {"character_count": 10, "character_limit": 12}
        r = await c.post("/v2/translate", json=body, headers=good)
        assert r.status_code == 456 and "quota" in r.json()["message"]
        assert int(r.headers["retry-after"]) >= 1
        assert (await c.get("/v2/usage")).status_code == 403


async def test_identical_requests_share_one_engine_request(serve, fake: FakeTranslator) -> None:  # type: ignore[no-untyped-def]
    """The deepl client re-sends after 10 s: identical work in flight is done once."""
    fake.delay = 0.2
    async with serve() as (app, c):
        body = {"text": ["Same text"], "target_lang": "DE", "source_lang": "EN"}
        rs = await asyncio.gather(
            *(c.post("/v2/translate", json=body, headers=AUTH) for _ in range(6))
        )
        assert {r.status_code for r in rs} == {200}
        assert fake.started == 1
        assert app.state.metrics.coalesced._value.get() == 5


async def test_tag_handling_html_and_xml(client: httpx.AsyncClient) -> None:
    html = "<p>Press <b>Save</b> to keep it.</p><pre>do not()</pre>"
    body = {"text": [html], "target_lang": "DE", "source_lang": "EN", "tag_handling": "html"}
    r = await client.post("/v2/translate", json=body, headers=AUTH)
    assert r.status_code == 200, r.text
    out = r.json()["translations"][0]["text"]
    assert out.count("<b>") == 1 and "<pre>do not()</pre>" in out and out.startswith("<p>[de]")
    xml = "<doc><t>Hello <keep>KEEP</keep> there</t></doc>"
    body = {**body, "text": [xml], "tag_handling": "xml", "ignore_tags": "keep"}
    r = await client.post("/v2/translate", json=body, headers=AUTH)
    assert r.status_code == 200, r.text
    assert "<keep>KEEP</keep>" in r.json()["translations"][0]["text"]
    # a namespaced tag as written (the fake engine marks what it translated: "[de] KEEP")
    xml = '<doc xmlns:k="urn:k"><t>Hello there</t><k:keep>KEEP</k:keep></doc>'
    r = await client.post(
        "/v2/translate", json={**body, "text": [xml], "ignore_tags": ["k:keep"]}, headers=AUTH
    )
    assert "<k:keep>KEEP</k:keep>" in r.json()["translations"][0]["text"], r.text
    body = {**body, "text": ["<doc><t>broken</doc>"]}
    r = await client.post("/v2/translate", json=body, headers=AUTH)
    assert r.status_code == 400
    assert r.json()["message"].startswith("Tag handling parsing failed")


async def test_a_keys_glossaries_are_its_own(serve, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Any key could list, read, use and delete another key's glossaries."""
    path = tmp_path / "keys"
    one = {"authorization": f"DeepL-Auth-Key {add_key(path, 'one')}"}
    two = {"authorization": f"DeepL-Auth-Key {add_key(path, 'two')}"}
    create = {"name": "secret", "source_lang": "en", "target_lang": "de", "entries": "a\tb"}
    async with serve(api_keys_file=path) as (_app, c):
        r = await c.post("/v2/glossaries", json=create, headers=one)
        assert r.status_code == 201, r.text
        gid = r.json()["glossary_id"]
        assert (await c.get("/v2/glossaries", headers=two)).json() == {"glossaries": []}
        for ask in (
            c.get(f"/v2/glossaries/{gid}", headers=two),
            c.get(f"/v2/glossaries/{gid}/entries", headers=two),
            c.delete(f"/v2/glossaries/{gid}", headers=two),
        ):
            r = await ask
            assert r.status_code == 404 and "not found" in r.json()["message"]
        body = {"text": ["a"], "source_lang": "EN", "target_lang": "DE", "glossary_id": gid}
        assert (await c.post("/v2/translate", json=body, headers=two)).status_code == 404
        assert (await c.post("/v2/translate", json=body, headers=one)).status_code == 200
        listed = (await c.get("/v2/glossaries", headers=one)).json()["glossaries"]
        assert [g["glossary_id"] for g in listed] == [gid]
        assert (await c.delete(f"/v2/glossaries/{gid}", headers=one)).status_code == 204


async def test_glossaries_are_bounded_in_number_and_name(client: httpx.AsyncClient) -> None:
    from dragoman.service.glossary import MAX_GLOSSARIES, MAX_NAME_CHARS

    create = {"name": "g", "source_lang": "en", "target_lang": "de", "entries": "a\tb"}
    for name in ("", " ", "n" * (MAX_NAME_CHARS + 1)):
        r = await client.post("/v2/glossaries", json={**create, "name": name}, headers=AUTH)
        assert r.status_code == 400 and "name" in r.json()["message"], r.text
    for _ in range(MAX_GLOSSARIES):
        r = await client.post("/v2/glossaries", json=create, headers=AUTH)
        assert r.status_code == 201
    r = await client.post("/v2/glossaries", json=create, headers=AUTH)
    assert r.status_code == 400 and "delete one first" in r.json()["message"]
    gid = (await client.get("/v2/glossaries", headers=AUTH)).json()["glossaries"][0]["glossary_id"]
    assert (await client.delete(f"/v2/glossaries/{gid}", headers=AUTH)).status_code == 204
    assert (await client.post("/v2/glossaries", json=create, headers=AUTH)).status_code == 201


async def test_glossaries(client: httpx.AsyncClient) -> None:
    create = {
        "name": "ui",
        "source_lang": "en",
        "target_lang": "de",
        "entries": "Save\tSichern\nfile\tDatei\n",
        "entries_format": "tsv",
    }
    r = await client.post("/v2/glossaries", json=create, headers=AUTH)
    assert r.status_code == 201, r.text
    info = r.json()
    assert info["entry_count"] == 2 and info["ready"] is True
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", info["creation_time"])
    gid = info["glossary_id"]
    assert (await client.get(f"/v2/glossaries/{gid}/entries", headers=AUTH)).text == (
        "Save\tSichern\nfile\tDatei\n"
    )
    assert [
        g["glossary_id"]
        for g in (await client.get("/v2/glossaries", headers=AUTH)).json()["glossaries"]
    ] == [gid]
    body = {"text": ["Save the file"], "source_lang": "EN", "target_lang": "DE", "glossary_id": gid}
    r = await client.post("/v2/translate", json=body, headers=AUTH)
    assert r.json()["translations"][0]["text"] == "[de] Sichern the Datei"  # the fake honours it
    r = await client.post("/v2/translate", json={**body, "source_lang": None}, headers=AUTH)
    assert r.status_code == 400 and "source_lang" in r.json()["message"]
    r = await client.post("/v2/translate", json={**body, "target_lang": "FR"}, headers=AUTH)
    assert r.status_code == 400
    assert (await client.delete(f"/v2/glossaries/{gid}", headers=AUTH)).status_code == 204
    r = await client.post("/v2/translate", json=body, headers=AUTH)
    assert r.status_code == 404 and "not found" in r.json()["message"]
    pairs = (await client.get("/v2/glossary-language-pairs", headers=AUTH)).json()
    assert {"source_lang": "en", "target_lang": "de"} in pairs["supported_languages"]
    r = await client.post("/v2/glossaries", json={**create, "entries": "no tab"}, headers=AUTH)
    assert r.status_code == 400
    # as DeepL: no same-language glossary, no glossary without entries, no source term twice
    for change, why in (
        ({"target_lang": "EN"}, "Unsupported glossary source and target language pair"),
        ({"entries": "\n"}, "no entries"),
        ({"entries": "a\tb\na\tc"}, "repeats the source term"),
    ):
        r = await client.post("/v2/glossaries", json={**create, **change}, headers=AUTH)
        assert r.status_code == 400 and why in r.json()["message"], r.text
    # bounded before any line is read: millions of blank lines or one line copied
    for entries in ("\n" * 2_000_000, "a\tb\n" * 400_000):  # under the 4 MiB body bound
        r = await client.post("/v2/glossaries", json={**create, "entries": entries}, headers=AUTH)
        assert r.status_code == 400 and "at most" in r.json()["message"], r.text


async def test_a_request_names_at_most_five_glossaries_each_once(client: httpx.AsyncClient) -> None:
    create = {"name": "g", "source_lang": "EN", "target_lang": "DE", "entries": "Save\tSichern"}
    gid = (await client.post("/v2/glossaries", json=create, headers=AUTH)).json()["glossary_id"]
    body = {"text": ["Save it"], "source_lang": "EN", "target_lang": "DE"}
    r = await client.post(
        "/v2/translate", json={**body, "glossary_id": gid, "glossary_ids": [gid] * 80}, headers=AUTH
    )
    assert r.status_code == 200 and r.json()["translations"][0]["text"] == "[de] Sichern it"
    six = [str(uuid.uuid4()) for _ in range(6)]
    r = await client.post("/v2/translate", json={**body, "glossary_ids": six}, headers=AUTH)
    assert r.status_code == 400 and "at most 5 glossaries" in r.json()["message"]


async def test_a_text_without_letters_reports_the_source_given(client: httpx.AsyncClient) -> None:
    body = {"text": ["42", "Hello", ""], "source_lang": "EN", "target_lang": "DE"}
    r = await client.post("/v2/translate", json=body, headers=AUTH)
    got = [t["detected_source_language"] for t in r.json()["translations"]]
    assert got == ["EN", "EN", "EN"]
