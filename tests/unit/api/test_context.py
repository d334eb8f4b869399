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
