"""The `quality` hint at the HTTP layer: a server hosting two tiers (each `[[models]]` entry an
echo engine under its own name, as `--architecture echo` serves them), every surface through the
one service."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest

from dragoman.api.app import build_app
from dragoman.api.serve import open_translator
from dragoman.service.settings import ServeSettings
from tests.unit.api.conftest import engine_ready

MODELS = [
    {"name": "small", "model": "qwen2.5-coder-0.5b-instruct", "languages": ["en", "fr", "ko"]},
    {
        "name": "large",
        "model": "qwen2.5-coder-1.5b-instruct",
        "languages": ["en", "ko"],
        "default_for": ["en-ko"],
    },
]
DEEPL = {"authorization": "DeepL-Auth-Key anything"}


@pytest.fixture
async def client(tmp_path) -> AsyncIterator[httpx.AsyncClient]:  # type: ignore[no-untyped-def]
    settings = ServeSettings(data_dir=tmp_path, architecture="echo", models=MODELS)  # type: ignore[arg-type]
    app = build_app(settings, lambda: open_translator(settings, ()))
    async with app.router.lifespan_context(app):
        await engine_ready(app)
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://test") as c:
            yield c


async def native(c: httpx.AsyncClient, target: str, **extra: object) -> httpx.Response:
    body = {"text": "Good morning", "source_lang": "en", "target_lang": target, **extra}
    return await c.post("/v1/translate", json=body)


@pytest.mark.parametrize(
    ("target", "quality", "model"),
    [
        ("ko", "fast", "small"),
        ("ko", "best", "large"),
        ("ko", None, "large"),  # marked default_for en-ko
        ("fr", None, "small"),
        ("fr", "best", "small"),  # no best tier for en-fr: what serves the pair
    ],
)
async def test_quality_picks_the_tier_that_serves_the_pair(
    client: httpx.AsyncClient, target: str, quality: str | None, model: str
) -> None:
    r = await native(client, target, **({"quality": quality} if quality else {}))
    assert r.status_code == 200, r.text
    assert r.json()["model"] == model


async def test_each_text_of_a_list_names_the_model_that_translated_it(
    client: httpx.AsyncClient,
) -> None:
    """A list's texts may go to different models (here by detected source: fr->ko has no best
    tier); the answer's `model` named the first one's only."""
    texts = [
        "Bonjour mes amis, comment allez-vous aujourd'hui ?",
        "Good morning my friends, how are you today?",
        "12",  # no letters: no model translated it
    ]
    r = await native(client, "ko", text=texts, source_lang="auto", quality="best")
    assert r.status_code == 200, r.text
    answer = r.json()
    assert [t.get("model") for t in answer["translations"]] == ["small", "large", None]
    assert answer["model"] == "small"  # the first translated text's


async def test_each_deepl_translation_says_which_tier_translated_it(
    client: httpx.AsyncClient,
) -> None:
    """As the native `model` per text: fr->ko has no best tier, en->ko has; every
    translation reported the first text's tier."""
    body = {
        "text": ["Bonjour mes amis, comment allez-vous ?", "Good morning my friends, how are you?"],
        "target_lang": "KO",
        "model_type": "quality_optimized",
    }
    r = await client.post("/v2/translate", json=body, headers=DEEPL)
    assert r.status_code == 200, r.text
    used = [t["model_type_used"] for t in r.json()["translations"]]
    assert used == ["latency_optimized", "quality_optimized"]


async def test_an_invalid_hint_is_refused_in_each_surface_shape(
    client: httpx.AsyncClient,
) -> None:
    r = await native(client, "ko", quality="medium")
    assert r.status_code == 422
    assert r.json() == {
        "error": {"code": "invalid_request", "message": "quality: Input should be 'fast' or 'best'"}
    }
    body = {"text": ["Good morning"], "target_lang": "KO", "model_type": "fastest"}
    r = await client.post("/v2/translate", json=body, headers=DEEPL)
    assert r.status_code == 400
    assert r.json() == {
        "message": "model_type: Input should be 'latency_optimized', 'quality_optimized' or "
        "'prefer_quality_optimized'"
    }


@pytest.mark.parametrize(
    ("model_type", "used"),
    [
        ("latency_optimized", "latency_optimized"),
        ("quality_optimized", "quality_optimized"),
        ("prefer_quality_optimized", "quality_optimized"),
    ],
)
async def test_deepl_model_type_is_the_hint_and_says_which_tier_translated(
    client: httpx.AsyncClient, model_type: str, used: str
) -> None:
    for target, expected in (("KO", used), ("FR", "latency_optimized")):  # fr: one tier
        body = {
            "text": ["Good morning"],
            "source_lang": "EN",
            "target_lang": target,
            "model_type": model_type,
        }
        r = await client.post("/v2/translate", json=body, headers=DEEPL)
        assert r.status_code == 200, r.text
        assert r.json()["translations"][0]["model_type_used"] == expected


async def test_deepl_without_model_type_reports_none(client: httpx.AsyncClient) -> None:
    body = {"text": ["Good morning"], "source_lang": "EN", "target_lang": "KO"}
    r = await client.post("/v2/translate", json=body, headers=DEEPL)
    assert r.status_code == 200, r.text
    assert "model_type_used" not in r.json()["translations"][0]


async def test_languages_lists_each_pair_tiers(client: httpx.AsyncClient) -> None:
    pairs = {
        (p["source"], p["target"]): p for p in (await client.get("/v1/languages")).json()["pairs"]
    }
    assert pairs[("en", "ko")] == {
        "source": "en",
        "target": "ko",
        "model": "large",
        "tiers": {"fast": "small", "best": "large"},
    }
    assert pairs[("en", "fr")] == {"source": "en", "target": "fr", "model": "small"}


async def test_libretranslate_has_no_hint_and_gets_the_pair_default(
    client: httpx.AsyncClient,
) -> None:
    r = await client.post("/translate", json={"q": "Good morning", "source": "en", "target": "ko"})
    assert r.status_code == 200, r.text
    assert r.json()["translatedText"] == "Good morning"  # echo
