"""What a translation charges its key, on every surface: its texts' characters and what their
prompts show the model beside them (the glossary's terms a sentence holds, the neighbouring
sentences shown as context), computed once in the translation service, the same whether the
cache answers or the engine (the chat surface's charge is tests/unit/api/test_openai.py's)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx

from dragoman.service.keys import add_key

TEXT = "We left at noon.\nIt rained.\nThen it stopped."  # 44 characters, three sentences


def native(text: str, **extra: Any) -> dict[str, Any]:
    return {"text": text, "source_lang": "en", "target_lang": "fr", **extra}


async def used_today(c: httpx.AsyncClient, key: str) -> int:
    r = await c.get("/v2/usage", headers={"authorization": f"DeepL-Auth-Key {key}"})
    assert r.status_code == 200, r.text
    count: int = r.json()["character_count"]
    return count


async def test_glossary_terms_a_text_holds_are_charged(serve, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A glossary grew every prompt for nothing: its terms a text holds cost their characters
    (a term it lacks is not in the prompt, and costs nothing), hit or miss."""
    key = add_key(tmp_path / "keys", "ann")
    auth = {"authorization": f"Bearer {key}"}
    async with serve(api_keys_file=tmp_path / "keys", key_chars_per_day=1000) as (_app, c):
        glossary = {"cat": "chat", "dog": "chien"}
        r = await c.post(
            "/v1/translate", json=native("The cat sat.", glossary=glossary), headers=auth
        )
        assert r.status_code == 200, r.text
        assert await used_today(c, key) == len("The cat sat.") + len("cat") + len("chat")
        r = await c.post(
            "/v1/translate", json=native("The cat sat.", glossary=glossary), headers=auth
        )
        assert r.status_code == 200, r.text  # a hit: charged the same
        assert await used_today(c, key) == 2 * 19


async def test_neighbours_shown_as_context_are_charged(serve, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    key = add_key(tmp_path / "keys", "ben")
    auth = {"authorization": f"Bearer {key}"}
    async with serve(api_keys_file=tmp_path / "keys", key_chars_per_day=1000) as (_app, c):
        r = await c.post("/v1/translate", json=native(TEXT, context="off"), headers=auth)
        assert r.status_code == 200, r.text
        assert await used_today(c, key) == 44
        r = await c.post("/v1/translate", json=native(TEXT, context="previous"), headers=auth)
        assert r.status_code == 200, r.text
        # "It rained." shown "We left at noon.", "Then it stopped." shown "It rained."
        assert await used_today(c, key) == 44 + 44 + 16 + 10
        r = await c.post("/v1/translate", json=native(TEXT, context="both"), headers=auth)
        assert r.status_code == 200, r.text
        # and each shown the one after: "We left at noon." "It rained.", "It rained." the last
        assert await used_today(c, key) == 114 + 44 + (16 + 10) + (10 + 16)


async def test_a_glossary_counts_toward_the_day_quota(serve, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    key = add_key(tmp_path / "keys", "cid")
    auth = {"authorization": f"Bearer {key}"}
    async with serve(api_keys_file=tmp_path / "keys", key_chars_per_day=30) as (_app, c):
        r = await c.post(
            "/v1/translate", json=native("The cat sat.", glossary={"cat": "chat"}), headers=auth
        )
        assert r.status_code == 200, r.text  # 19 of 30
        r = await c.post("/v1/translate", json=native("The cat sat."), headers=auth)
        assert r.status_code == 429, r.text  # 12 more would be 31
        assert r.json()["error"]["code"] == "quota_exceeded"


async def test_deepl_bills_what_it_charges(serve, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """billed_characters and /v2/usage agree: a stored glossary's terms a text holds count."""
    path = tmp_path / "keys"
    key = add_key(path, "dee")
    auth = {"authorization": f"DeepL-Auth-Key {key}"}
    create = {"name": "g", "source_lang": "en", "target_lang": "de", "entries": "cat\tKatze"}
    async with serve(api_keys_file=path, key_chars_per_day=1000) as (_app, c):
        r = await c.post("/v2/glossaries", json=create, headers=auth)
        assert r.status_code == 201, r.text
        gid = r.json()["glossary_id"]
        texts = ["The cat sat.", "A dog."]
        body = {"text": texts, "source_lang": "EN", "target_lang": "DE", "glossary_id": gid}
        r = await c.post("/v2/translate", json=body, headers=auth)
        assert r.status_code == 200, r.text
        billed = [t["billed_characters"] for t in r.json()["translations"]]
        assert billed == [len("The cat sat.") + len("cat") + len("Katze"), len("A dog.")]
        assert await used_today(c, key) == sum(billed)
