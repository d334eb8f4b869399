"""Alternatives in each surface's shape, on a fake engine that makes candidates (the HTTP
layer only: the candidates themselves are proven on the real engine, tests/integration)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest

from dragoman.api.app import build_app
from dragoman.engine.protocol import Terms, Translation
from dragoman.service.settings import ServeSettings
from tests.fakes import FakeTranslator, factory_for
from tests.unit.api.conftest import engine_ready

FRENCH = {"Hello world": "Bonjour tout le monde", "Good night": "Bonne nuit à tous"}


class SamplingFake(FakeTranslator):
    """Candidates of a text: the greedy reply, a sample that repeats it, one close to it and
    one far from it (each passes the replies' check: French)."""

    def __init__(self) -> None:
        super().__init__()
        self.asked: list[int] = []

    async def translate(
        self, text: str, source: str, target: str, terms: Terms = ()
    ) -> Translation:
        return Translation(FRENCH[text], "stop", 12, 2, 0.0, 0.01)

    async def candidates(
        self, text: str, source: str, target: str, terms: Terms, k: int, patience: float | None
    ) -> list[Translation]:
        self.asked.append(k)
        greedy = await self.translate(text, source, target, terms)
        close = greedy.text.replace(" ", " donc ", 1)
        variants = [greedy.text, close, "Il pleut des cordes ce soir"]
        samples = [Translation(v, "stop", 5, 5, 0.0, 0.01, logprob=-1.0) for v in variants]
        return [greedy, *samples][:k]


@pytest.fixture
async def served(tmp_path) -> AsyncIterator[tuple[SamplingFake, httpx.AsyncClient]]:  # type: ignore[no-untyped-def]
    fake = SamplingFake()
    settings = ServeSettings(data_dir=tmp_path, candidates=1)
    app = build_app(settings, factory_for(fake))
    async with app.router.lifespan_context(app):
        await engine_ready(app)
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://test") as c:
            yield fake, c


async def test_libretranslate_alternatives_beside_the_text_for_a_string_and_a_list(
    served: tuple[SamplingFake, httpx.AsyncClient],
) -> None:
    fake, client = served
    body = {"q": ["Hello world", "Good night"], "source": "en", "target": "fr", "alternatives": 2}
    out = (await client.post("/translate", json=body)).json()
    assert out["translatedText"] == ["Bonjour tout le monde", "Bonne nuit à tous"]
    # Three candidates, two of them the same: one runner-up each.
    assert out["alternatives"] == [["Bonjour donc tout le monde"], ["Bonne donc nuit à tous"]]
    assert fake.asked == [3, 3]  # the pick and two runners-up
    form = {"q": "Hello world", "source": "en", "target": "fr", "alternatives": "3"}
    one = (await client.post("/translate", data=form)).json()
    assert one["translatedText"] == "Bonjour tout le monde"
    assert one["alternatives"] == ["Bonjour donc tout le monde", "Il pleut des cordes ce soir"]
    r = await client.post("/translate", json={**body, "alternatives": 4})
    assert r.status_code == 400
    assert r.json() == {"error": "Invalid request: Too many alternatives (4) exceed the limit (3)"}
    plain = (await client.post("/translate", json={**body, "alternatives": 0})).json()
    assert "alternatives" not in plain


async def test_native_candidates_and_alternatives(
    served: tuple[SamplingFake, httpx.AsyncClient],
) -> None:
    fake, client = served
    body = {"text": "Hello world", "source_lang": "en", "target_lang": "fr"}
    out = (await client.post("/v1/translate", json=body)).json()
    assert (
        "alternatives" not in out["translations"][0]
        or out["translations"][0]["alternatives"] is None
    )
    assert fake.asked == []  # the server's setting: 1, the greedy reply alone
    out = (await client.post("/v1/translate", json={**body, "candidates": 4})).json()
    assert fake.asked == [4] and out["translations"][0]["text"] == "Bonjour tout le monde"
    assert out["usage"]["output_tokens"] == 2 + 3 * 5  # every candidate's tokens
    out = (await client.post("/v1/translate", json={**body, "alternatives": 1})).json()
    # From the cache: the four candidates' answer holds its runners-up.
    assert out["translations"][0]["alternatives"] == ["Bonjour donc tout le monde"]
    assert fake.asked == [4]
    for bad in ({"candidates": 0}, {"candidates": 9}, {"candidates": "4"}, {"alternatives": 8}):
        r = await client.post("/v1/translate", json={**body, **bad})
        assert r.status_code == 422 and r.json()["error"]["code"] == "invalid_request", bad
    info = (await client.get("/v1/info")).json()["candidates"]
    assert info["setting"] == 1 and info["used"] == {"1/setting": 1, "4/request": 1}
