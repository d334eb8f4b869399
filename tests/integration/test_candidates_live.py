"""Candidates and their consensus on the real engine and default model: a request's own
`candidates`, LibreTranslate's `alternatives` in its response shape, and what /v1/info reports."""

from __future__ import annotations

import httpx
import pytest

pytestmark = pytest.mark.integration

LONG = [
    "Thank you for coming today. The meeting starts at nine, and lunch is served in the garden.",
    "The committee will meet again next week to discuss the budget and the new building.",
]


def _distinct_runners_up(pick: str, alternatives: list[str], most: int) -> None:
    assert len(alternatives) <= most
    assert len(set(alternatives)) == len(alternatives)
    assert pick not in alternatives
    assert all(a.strip() and a not in LONG for a in alternatives)


async def test_libretranslate_alternatives_for_a_list_and_a_string(
    client: httpx.AsyncClient,
) -> None:
    body = {"q": LONG, "source": "en", "target": "fr", "alternatives": 3}
    r = await client.post("/translate", json=body)
    assert r.status_code == 200, r.text
    out = r.json()
    assert len(out["translatedText"]) == 2 and len(out["alternatives"]) == 2
    for pick, alternatives in zip(out["translatedText"], out["alternatives"], strict=True):
        _distinct_runners_up(pick, alternatives, 3)
    # Sampled at temperature 1, two sentences' three samples do not all repeat the pick.
    assert sum(map(len, out["alternatives"])) >= 1
    # A string, as LibreTranslate's web page sends it (a form, alternatives=3): a list of
    # strings beside the string. Cached with the list's answer: no engine work.
    form = {"q": LONG[0], "source": "en", "target": "fr", "alternatives": "2"}
    one = (await client.post("/translate", data=form)).json()
    assert one["translatedText"] == out["translatedText"][0]
    assert one["alternatives"] == out["alternatives"][0][:2]
    too_many = await client.post("/translate", json={**body, "alternatives": 4})
    assert too_many.status_code == 400 and "alternatives" in too_many.json()["error"]


async def test_a_request_s_candidates_and_what_info_counts(client: httpx.AsyncClient) -> None:
    async def used() -> dict[str, int]:
        info = (await client.get("/v1/info")).json()["candidates"]
        assert info["setting"] == "auto" and info["best"] == 4
        return dict(info["used"])

    before = await used()
    body = {
        "text": "Our office is closed on Monday for the holiday and opens again on Tuesday.",
        "source_lang": "en",
        "target_lang": "de",
        "candidates": 4,
        "alternatives": 1,
    }
    r = await client.post("/v1/translate", json=body)
    assert r.status_code == 200, r.text
    item = r.json()["translations"][0]
    _distinct_runners_up(item["text"], item["alternatives"], 1)
    assert item["output_tokens"] > 0
    after = await used()
    assert after.get("4/request", 0) == before.get("4/request", 0) + 1
    bad = await client.post("/v1/translate", json={**body, "candidates": 9})
    assert bad.status_code == 422 and "candidates" in bad.text
