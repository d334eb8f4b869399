from __future__ import annotations

from dragoman.engine.prompts import InContext
from dragoman.engine.protocol import Terms, Translation
from tests.fakes import FakeTranslator

TEXT = "We left at noon.\nIt rained.\nThen it stopped."


def record(fake: FakeTranslator) -> list[str]:
    sent: list[str] = []
    translate = fake.translate

    async def spy(text: str, source: str, target: str, terms: Terms = ()) -> Translation:
        sent.append(text)
        return await translate(text, source, target, terms)

    fake.translate = spy  # type: ignore[method-assign]
    return sent


def neighbours(sent: list[str]) -> dict[str, tuple[str, str]]:
    return {str(s): (s.before, s.after) for s in sent if isinstance(s, InContext)}


async def test_context_is_off_by_default(serve, fake) -> None:  # type: ignore[no-untyped-def]
    sent = record(fake)
    async with serve() as (_, client):
        r = await client.post(
            "/v1/translate", json={"text": TEXT, "source_lang": "en", "target_lang": "fr"}
        )
    assert r.status_code == 200
    assert sorted(sent) == sorted(TEXT.split("\n")) and not neighbours(sent)


async def test_the_server_setting_and_the_request_option(serve, fake) -> None:  # type: ignore[no-untyped-def]
    sent = record(fake)
    body = {"text": TEXT, "source_lang": "en", "target_lang": "fr"}
    async with serve(sentence_context="previous", cache_mib=0) as (_, client):
        r = await client.post("/v1/translate", json=body)
        assert r.status_code == 200
        assert r.json()["translations"][0]["text"].count("[fr]") == 3
        assert neighbours(sent) == {
            "It rained.": ("We left at noon.", ""),
            "Then it stopped.": ("It rained.", ""),
        }
        sent.clear()
        r = await client.post("/v1/translate", json=body | {"context": "off"})
        assert r.status_code == 200 and len(sent) == 3 and not neighbours(sent)
        r = await client.post("/v1/translate", json=body | {"context": "sideways"})
        assert r.status_code == 422


async def test_a_reply_made_beside_neighbours_is_cached_with_them(serve, fake) -> None:  # type: ignore[no-untyped-def]
    # Keyed on the sentence alone, "It rained." translated beside one text's neighbours was
    # the answer for it alone (context off) and beside any other text's, and two copies of
    # it with different neighbours in one text shared one engine request.
    sent = record(fake)
    body = {"source_lang": "en", "target_lang": "fr", "context": "previous"}
    texts = [
        TEXT,
        "We left at noon.\nIt rained.",  # the same neighbours: a hit
        "Nobody came.\nIt rained.",
        "We stayed.\nIt rained.\nWe went.\nIt rained.",
    ]
    async with serve() as (_, client):
        for text in texts:
            r = await client.post("/v1/translate", json=body | {"text": text})
            assert r.status_code == 200
        for _ in range(2):  # alone, then a hit
            r = await client.post(
                "/v1/translate", json=body | {"text": "It rained.", "context": "off"}
            )
            assert r.status_code == 200
    shown = [(s.before, s.after) if isinstance(s, InContext) else ("", "") for s in sent]
    rained = sorted(n for s, n in zip(sent, shown, strict=True) if s == "It rained.")
    beside = ["We left at noon.", "Nobody came.", "We stayed.", "We went.", ""]  # "": alone
    assert rained == sorted((before, "") for before in beside)
