"""The compatible surfaces on the real engine, driven by the real client packages
(libretranslatepy, deepl) and by raw HTTP for what clients send that their packages do not
(Mastodon's JSON list with source auto, multipart, a query-string POST, DeepL's form body)."""

from __future__ import annotations

import asyncio

import deepl
import httpx
import pytest
from libretranslatepy import LibreTranslateAPI

from dragoman.bench.servers import Launched
from tests.integration.conftest import Pace

pytestmark = pytest.mark.integration

EN = "Thank you very much for your help."
DE = "Vielen Dank für Ihre Hilfe, mein Freund."
FR = "Merci beaucoup pour votre aide, mon ami."


def translated(out: str, source: str) -> bool:
    return bool(out.strip()) and out.strip() != source


def test_libretranslatepy(live_server: Launched, pace: Pace) -> None:
    lt = LibreTranslateAPI(live_server.url + "/")
    out = lt.translate(EN, "en", "fr")
    assert translated(out, EN)
    detected = lt.detect(DE)
    assert detected[0]["language"] == "de" and 0 < detected[0]["confidence"] <= 100
    codes = {item["code"] for item in lt.languages()}
    assert {"en", "fr", "de", "zh-Hans"} <= codes


def test_deepl_client(live_server: Launched, pace: Pace) -> None:
    translator = deepl.Translator("any-key", server_url=live_server.url)
    one = translator.translate_text(EN, target_lang="FR")
    assert isinstance(one, deepl.TextResult)
    assert translated(one.text, EN) and one.billed_characters == len(EN)
    assert one.detected_source_lang == "EN"
    many = translator.translate_text([DE, FR], target_lang="EN-US")
    assert [r.detected_source_lang for r in many] == ["DE", "FR"]
    assert all(translated(r.text, src) for r, src in zip(many, [DE, FR], strict=True))
    sources = {lang.code for lang in translator.get_source_languages()}
    targets = {lang.code for lang in translator.get_target_languages()}
    assert {"EN", "DE", "FR"} <= sources
    assert {"EN-GB", "EN-US", "PT-BR", "DE"} <= targets
    usage = translator.get_usage()
    assert usage.character.count >= len(EN) + len(DE) + len(FR)
    assert not usage.any_limit_reached


async def test_mastodon_list_with_auto_detects_each_text(client: httpx.AsyncClient) -> None:
    body = {"q": [EN, DE, "2026 🙂"], "source": "auto", "target": "fr", "format": "text"}
    r = await client.post("/translate", json=body, headers={"content-type": "application/json"})
    assert r.status_code == 200, r.text
    out = r.json()
    assert [d["language"] for d in out["detectedLanguage"][:2]] == ["en", "de"]
    assert out["detectedLanguage"][2]["confidence"] == 0.0
    assert translated(out["translatedText"][0], EN) and translated(out["translatedText"][1], DE)
    assert out["translatedText"][2] == "2026 🙂"  # no letters: as it was


async def test_multipart_query_string_and_deepl_form(client: httpx.AsyncClient) -> None:
    fields = {"q": EN, "source": "en", "target": "de", "format": "text", "alternatives": "3"}
    multipart, query, form = await asyncio.gather(
        client.post("/translate", files={k: (None, v) for k, v in fields.items()}),
        client.post("/translate", params={"q": EN, "source": "auto", "target": "es"}),
        client.post("/v2/translate", data={"text": FR, "target_lang": "en-gb"}),
    )
    assert multipart.status_code == 200 and translated(multipart.json()["translatedText"], EN)
    # As LibreTranslate's page asks (a form, alternatives=3): runners-up beside the text.
    alternatives = multipart.json()["alternatives"]
    assert isinstance(alternatives, list) and len(alternatives) <= 3
    assert multipart.json()["translatedText"] not in alternatives
    assert len(set(alternatives)) == len(alternatives)
    assert query.json()["detectedLanguage"]["language"] == "en"
    assert form.json()["translations"][0]["detected_source_language"] == "FR"
    assert form.json()["translations"][0]["billed_characters"] == len(FR)


async def test_bad_input_in_each_surface_shape(client: httpx.AsyncClient) -> None:
    lt = await client.post("/translate", json={"q": EN, "source": "en", "target": "xx"})
    assert (lt.status_code, lt.json()) == (400, {"error": "xx is not supported"})
    dl = await client.post("/v2/translate", json={"text": [EN], "target_lang": "XX"})
    assert (dl.status_code, dl.json()) == (
        400,
        {"message": "Value for 'target_lang' not supported."},
    )
    dl = await client.post(
        "/v2/translate", json={"text": [EN], "target_lang": "DE", "glossary_id": "g"}
    )
    assert dl.status_code == 400 and "glossar" in dl.json()["message"]


async def test_identical_concurrent_requests_cost_one_engine_request(
    client: httpx.AsyncClient,
) -> None:
    def coalesced(text: str) -> float:
        for line in text.splitlines():
            if line.startswith("dragoman_coalesced_total "):
                return float(line.split()[1])
        raise AssertionError("no dragoman_coalesced_total")

    before = coalesced((await client.get("/metrics")).text)
    body = {"text": ["A quiet evening by the lake, far from the city."], "target_lang": "DE"}
    rs = await asyncio.gather(*(client.post("/v2/translate", json=body) for _ in range(6)))
    assert {r.status_code for r in rs} == {200}
    assert len({r.json()["translations"][0]["text"] for r in rs}) == 1
    assert coalesced((await client.get("/metrics")).text) - before == 5


def test_deepl_glossaries_with_the_real_client(live_server: Launched, pace: Pace) -> None:
    translator = deepl.Translator("any-key", server_url=live_server.url)
    glossary = translator.create_glossary(
        "ui", source_lang="EN", target_lang="DE", entries={"dashboard": "Armaturenbrett"}
    )
    assert glossary.entry_count == 1 and glossary.ready
    assert translator.get_glossary_entries(glossary) == {"dashboard": "Armaturenbrett"}
    result = translator.translate_text(
        "Open the dashboard.", source_lang="EN", target_lang="DE", glossary=glossary
    )
    assert result.text.strip()
    assert glossary.glossary_id in {g.glossary_id for g in translator.list_glossaries()}
    translator.delete_glossary(glossary)
    with pytest.raises(deepl.GlossaryNotFoundException):
        translator.get_glossary(glossary.glossary_id)
