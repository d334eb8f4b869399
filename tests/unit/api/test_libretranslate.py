"""LibreTranslate's surface at the HTTP layer (fake engine, real detector): parameters from
JSON, forms, multipart and the query string; its shapes, codes and errors."""

from __future__ import annotations

from pathlib import Path

import httpx

from dragoman.service.keys import add_key
from tests.fakes import FakeTranslator

MIXED = ["Hello, how are you today my friend?", "Wie geht es dir heute, mein Freund?"]


async def test_json_scalar_q_with_a_source(client: httpx.AsyncClient) -> None:
    r = await client.post("/translate", json={"q": "Hello", "source": "en", "target": "fr"})
    assert r.status_code == 200
    assert r.json() == {"translatedText": "[fr] Hello"}  # no detectedLanguage: source given


async def test_list_q_with_auto_detects_each_text(client: httpx.AsyncClient) -> None:
    """Mastodon's request: a list `q`, source auto; detectedLanguage is a list, one per text."""
    body = {"q": [*MIXED, "12345"], "source": "auto", "target": "fr", "format": "text"}
    r = await client.post("/translate", json=body)
    assert r.status_code == 200, r.text
    out = r.json()
    assert out["translatedText"] == [f"[fr] {MIXED[0]}", f"[fr] {MIXED[1]}", "12345"]
    langs = [d["language"] for d in out["detectedLanguage"]]
    assert langs == ["en", "de", "en"]
    confidences = [d["confidence"] for d in out["detectedLanguage"]]
    assert confidences[0] > 50 and confidences[1] > 50 and confidences[2] == 0.0


async def test_text_already_in_the_target_comes_back_as_is(
    client: httpx.AsyncClient, fake: FakeTranslator
) -> None:
    r = await client.post("/translate", json={"q": MIXED[1], "source": "auto", "target": "de"})
    assert r.json()["translatedText"] == MIXED[1]
    assert r.json()["detectedLanguage"]["language"] == "de"
    assert fake.started == 0


async def test_form_multipart_and_query_string(client: httpx.AsyncClient) -> None:
    form = {"q": "line one\r\nline two", "source": "en", "target": "de"}
    r = await client.post("/translate", data=form)
    # CRLF -> LF as LibreTranslate; each line its own engine request, the newline kept
    assert r.json() == {"translatedText": "[de] line one\n[de] line two"}
    r = await client.post("/translate", files={k: (None, v) for k, v in form.items()})
    assert r.status_code == 200 and r.json()["translatedText"].startswith("[de] line one")
    r = await client.post("/translate", params={"q": "Hello", "source": "en", "target": "zh-Hans"})
    assert r.json() == {"translatedText": "[zh] Hello"}


async def test_codes_and_aliases(client: httpx.AsyncClient) -> None:
    for code in ("zh", "ZH-HANS", "zh-hans"):
        r = await client.post("/translate", json={"q": "Hi there", "source": "en", "target": code})
        assert r.status_code == 200, (code, r.text)
    r = await client.post("/translate", json={"q": "Hi", "source": "en", "target": "zz"})
    assert (r.status_code, r.json()) == (400, {"error": "zz is not supported"})
    r = await client.post("/translate", json={"q": "Hi", "source": "en", "target": "zh-Hant"})
    assert (r.status_code, r.json()) == (400, {"error": "zh-Hant is not supported"})
    r = await client.post("/translate", json={"q": "Hi", "source": " ", "target": "fr"})
    assert r.status_code == 400 and "empty language code" in r.json()["error"]


async def test_errors_in_libretranslate_shape(client: httpx.AsyncClient) -> None:
    r = await client.post("/translate", json={"source": "en", "target": "fr"})
    assert (r.status_code, r.json()) == (400, {"error": "Invalid request: missing q parameter"})
    r = await client.post(
        "/translate", json={"q": "x", "source": "en", "target": "fr", "format": "pdf"}
    )
    assert (r.status_code, r.json()) == (400, {"error": "pdf format is not supported"})
    r = await client.post(
        "/translate", content=b"{not json", headers={"content-type": "application/json"}
    )
    assert (r.status_code, r.json()) == (400, {"error": "Invalid JSON format"})
    r = await client.post("/translate", json=["q"])
    assert r.status_code == 400 and "error" in r.json()
    r = await client.post("/translate", json={"q": ["a"] * 5, "source": "en", "target": "fr"})
    assert r.status_code == 400 and isinstance(r.json()["error"], str)  # max_items is 4
    r = await client.post("/translate", json={"q": "x" * 201, "source": "en", "target": "fr"})
    assert r.status_code == 400  # max_text_chars is 200
    r = await client.get("/translate")
    assert r.status_code == 405 and isinstance(r.json()["error"], str)


async def test_alternatives_are_accepted_and_empty(client: httpx.AsyncClient) -> None:
    body = {"q": ["Hello"], "source": "en", "target": "fr", "alternatives": 3}
    r = await client.post("/translate", json=body)
    assert r.json() == {"translatedText": ["[fr] Hello"], "alternatives": [[]]}


async def test_languages_with_targets_and_a_form_body_on_the_get(client: httpx.AsyncClient) -> None:
    r = await client.request(
        "GET",
        "/languages",
        content=b"api_key=",
        headers={"content-type": "application/x-www-form-urlencoded"},
    )
    assert r.status_code == 200
    langs = {item["code"]: item for item in r.json()}
    assert set(langs) == {"en", "fr", "de", "zh-Hans"}
    assert sorted(langs["en"]["targets"]) == ["de", "fr", "zh-Hans"]
    assert langs["de"]["name"] == "German"


async def test_detect(client: httpx.AsyncClient) -> None:
    r = await client.post("/detect", data={"q": "Bonjour tout le monde, comment allez-vous ?"})
    assert r.status_code == 200
    found = r.json()
    assert found[0]["language"] == "fr" and 0 < found[0]["confidence"] <= 100
    assert 1 <= len(found) <= 3
    r = await client.post("/detect", data={"q": "🙂 42"})
    assert r.json() == [{"confidence": 0.0, "language": "en"}]
    r = await client.post("/detect", data={})
    assert (r.status_code, r.json()) == (400, {"error": "Invalid request: missing q parameter"})


async def test_detect_a_list_q_gives_one_ranking(client: httpx.AsyncClient) -> None:
    """LibreTranslate's own test sends /detect a list; it was refused, 400 (q: a valid
    string). One ranking for the texts, its confidences averaged, the longer text first."""
    texts = [
        "Der Zug nach Berlin fährt heute wegen des Wetters deutlich später ab als geplant.",
        "Bonjour tout le monde",
    ]
    r = await client.post("/detect", json={"q": texts})
    assert r.status_code == 200, r.text
    found = r.json()
    assert [c["language"] for c in found[:2]] == ["de", "fr"]
    assert all(0 < c["confidence"] <= 100 for c in found) and len(found) <= 3
    r = await client.post("/detect", json={"q": ["🙂", "42"]})
    assert r.json() == [{"confidence": 0.0, "language": "en"}]
    r = await client.post("/detect", json={"q": []})
    assert (r.status_code, r.json()) == (400, {"error": "Invalid request: missing q parameter"})


async def test_frontend_settings_and_cors(client: httpx.AsyncClient) -> None:
    r = await client.get("/frontend/settings", headers={"origin": "http://example.test"})
    assert r.status_code == 200
    assert r.json()["language"]["source"]["code"] == "auto"
    assert r.json()["keyRequired"] is False
    assert r.headers["access-control-allow-origin"] == "*"
    r = await client.options(
        "/translate",
        headers={"origin": "http://example.test", "access-control-request-method": "POST"},
    )
    assert r.status_code == 200 and "POST" in r.headers["access-control-allow-methods"]


async def test_api_key_in_body_or_query(serve, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "keys"
    key = add_key(path, "weblate")
    async with serve(api_keys_file=path) as (_app, c):
        body = {"q": "Hello", "source": "en", "target": "fr"}
        r = await c.post("/translate", json=body)
        assert r.status_code == 400 and "api_key" in r.json()["error"]
        r = await c.post("/translate", json={**body, "api_key": ""})
        assert r.status_code == 400  # "" is no key
        r = await c.post("/translate", json={**body, "api_key": "wrong"})
        assert (r.status_code, r.json()) == (403, {"error": "the API key is not valid"})
        r = await c.post("/translate", json={**body, "api_key": key})
        assert r.status_code == 200
        r = await c.post("/translate", params={**body, "api_key": key})
        assert r.status_code == 200
        r = await c.post("/detect", data={"q": "Hello there", "api_key": key})
        assert r.status_code == 200
        r = await c.get("/frontend/settings")
        assert r.json()["keyRequired"] is True


async def test_html_format_keeps_tags(client: httpx.AsyncClient) -> None:
    """Mastodon sends its posts as HTML with source auto."""
    post = '<p>Hello <a href="https://x.org/@a" class="u-url">@friend</a>, how are you?</p>'
    body = {"q": [post], "source": "auto", "target": "fr", "format": "html"}
    r = await client.post("/translate", json=body)
    assert r.status_code == 200, r.text
    out = r.json()["translatedText"][0]
    assert out.startswith("<p>[fr] Hello ") and out.endswith("</p>")
    assert '<a href="https://x.org/@a" class="u-url">@friend</a>' in out
    assert r.json()["detectedLanguage"][0]["language"] == "en"
