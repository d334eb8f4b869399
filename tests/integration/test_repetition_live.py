"""The guard against degenerate repetition, on World English Bible verses that sent this model
into loops when decoded greedily to Korean and Japanese (found by probing 48 verses each; with
plain greedy 5 Korean and 3 Japanese outputs looped, e.g. "그의 봉이 봉을 높이고, " repeated
to the token cap)."""

from __future__ import annotations

import re

import httpx
import pytest

pytestmark = pytest.mark.integration

TRIGGERS = {
    "ko": [
        "He shall be like a tree planted by the streams of water, That brings forth its fruit "
        "in its season, Whose leaf also does not wither. Whatever he does shall prosper.",
        "For there is no faithfulness in their mouth. Their inward part is destruction. Their "
        "throat is an open tomb. They flatter with their tongue.",
        "He lies in wait near the villages. From ambushes, he murders the innocent. His eyes "
        "are secretly set against the helpless.",
        "He lurks in secret as a lion in his ambush. He lies in wait to catch the helpless. He "
        "catches the helpless, when he draws him in his net.",
        "In whose eyes a vile man is despised, But who honors those who fear Yahweh; He who "
        "keeps an oath even when it hurts, and doesn't change;",
        "Let the enemy pursue my soul, and overtake it; Yes, let him tread my life down to the "
        "earth, And lay my glory in the dust. Selah.",
    ],
    "ja": [
        "But let all those who take refuge in you rejoice, Let them always shout for joy, "
        "because you defend them. Let them also who love your name be joyful in you.",
        "You have delivered me from the strivings of the people. You have made me the head of "
        "the nations. A people whom I have not known shall serve me.",
        "Their voice has gone out through all the earth, Their words to the end of the world. "
        "In them he has set a tent for the sun,",
    ],
}
# Three back-to-back copies of anything from a short word to a whole sentence or line.
THREE_COPIES = re.compile(r"(.{4,400}?)\s*\1\s*\1", re.DOTALL)
# A first line that announces the answer instead of being it ("아래의 문장은 ...:").
PREAMBLE = re.compile(r"\A[^\n]{0,80}[:：]\s*\n")


async def test_looping_inputs_end_bounded_and_without_repeats(client: httpx.AsyncClient) -> None:
    reasons: list[str] = []
    for target, texts in TRIGGERS.items():
        r = await client.post(
            "/v1/translate", json={"text": texts, "source_lang": "en", "target_lang": target}
        )
        assert r.status_code == 200, r.text
        for src, item in zip(texts, r.json()["translations"], strict=True):
            reasons.append(item["finish_reason"])
            assert item["finish_reason"] in ("stop", "repetition"), item
            assert not THREE_COPIES.search(item["text"]), item["text"]
            assert not PREAMBLE.match(item["text"]), item["text"]
            # A loop left alone runs to the output cap (3 x input + 16); these stop far earlier.
            assert item["output_tokens"] < 2 * len(src.split()) + 40, item
            assert item["text"]
    assert "repetition" in reasons, "the guard never engaged on inputs known to loop"


async def test_repetition_in_the_source_survives(client: httpx.AsyncClient) -> None:
    text = "Ha ha ha ha ha ha ha ha ha ha ha ha! That is so funny."
    r = await client.post(
        "/v1/translate", json={"text": text, "source_lang": "en", "target_lang": "fr"}
    )
    assert r.status_code == 200, r.text
    item = r.json()["translations"][0]
    assert item["finish_reason"] == "stop", item
    assert item["text"].lower().count("ha") >= 8, item["text"]
