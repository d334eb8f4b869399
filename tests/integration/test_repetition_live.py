"""The guard against degenerate repetition, on World English Bible verses that sent this model
into loops when decoded greedily to Korean and Japanese (found by probing 48 verses each; with
plain greedy 5 Korean and 3 Japanese outputs looped, e.g. "그의 봉이 봉을 높이고, " repeated
to the token cap). The few-shot prompt stopped those loops on this host; the verses marked
below loop with it (found by probing 64 Psalms to each and the sentences of the eval's
paragraphs the guard cut)."""

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
        # These loop with the few-shot prompt.
        "Arise, Yahweh! Save me, my God! For you have struck all of my enemies on the cheek "
        "bone. You have broken the teeth of the wicked.",
        "But know that Yahweh has set apart for himself him who is godly: Yahweh will hear when "
        "I call to him.",
        "From the lips of babes and infants you have established strength, Because of your "
        "adversaries, that you might silence the enemy and the avenger.",
        "She took dough, and kneaded it, and made cakes in his sight, and did bake the cakes.",
    ],
    "ja": [
        "But let all those who take refuge in you rejoice, Let them always shout for joy, "
        "because you defend them. Let them also who love your name be joyful in you.",
        "You have delivered me from the strivings of the people. You have made me the head of "
        "the nations. A people whom I have not known shall serve me.",
        "Their voice has gone out through all the earth, Their words to the end of the world. "
        "In them he has set a tent for the sun,",
        # These loop with the few-shot prompt.
        "The children of Reuben, and the children of Gad, and the half-tribe of Manasseh, passed "
        "over armed before the children of Israel, as Moses spoke to them: about forty thousand "
        "ready armed for war passed over before Yahweh to battle, to the plains of Jericho.",
        "The people served Yahweh all the days of Joshua, and all the days of the elders who "
        "outlived Joshua, who had seen all the great work of Yahweh that he had worked for Israel.",
    ],
    "de": [
        # This loops with the few-shot prompt.
        "The Lord is not slow concerning his promise, as some count slowness; but is "
        "longsuffering towards us, not wishing that any should perish, but that all should come "
        "to repentance.",
    ],
}
# Three back-to-back copies of anything from a short word to a whole sentence or line.
THREE_COPIES = re.compile(r"(.{4,400}?)\s*\1\s*\1", re.DOTALL)
# A first line that announces the answer instead of being it ("아래의 문장은 ...:").
PREAMBLE = re.compile(r"\A[^\n]{0,80}[:：]\s*\n")


async def test_looping_inputs_end_bounded_and_without_repeats(client: httpx.AsyncClient) -> None:
    reasons: list[str] = []
    # At most 8 texts a request (the server's max_items).
    batches = [(t, ts[i : i + 8]) for t, ts in TRIGGERS.items() for i in range(0, len(ts), 8)]
    for target, texts in batches:
        r = await client.post(
            "/v1/translate", json={"text": texts, "source_lang": "en", "target_lang": target}
        )
        assert r.status_code == 200, r.text
        for src, item in zip(texts, r.json()["translations"], strict=True):
            reasons.append(item["finish_reason"])
            text = item["text"]
            assert text
            assert not THREE_COPIES.search(text), text
            assert not PREAMBLE.match(text), text
            assert "\n" not in text, text  # a one-line source: later lines are commentary
            # Never past the budget (3 x the text's tokens + 16; these verses run under 2 tokens
            # a word, and input_tokens counts the prompt's examples too). A loop is cut where it
            # starts, far below it.
            assert item["output_tokens"] <= 6 * len(src.split()) + 16, item
            if item["finish_reason"] == "repetition":
                assert item["output_tokens"] < 2 * len(src.split()) + 40, item
    # Which verses loop depends on the CPU's arithmetic (bf16 or float32, the ISA), but some
    # of these always did on every host tried.
    assert "repetition" in reasons, f"the guard never engaged on inputs known to loop: {reasons}"


# Sources that repeat themselves; the model echoes the repeats ("Vielen Dank, " x 6: 24 tokens,
# which the guard would cut as a loop were repetition in the source not allowed for).
ECHOED = [
    ("Thank you, thank you, thank you, thank you, thank you, thank you so much!", "de"),
    ("Hello? Hello? Hello? Hello? Hello? Hello? Is anyone there?", "fr"),
    ("Go team! Go team! Go team! Go team! Go team! Go team!", "fr"),
    ("Left, right, left, right, left, right, left, right, left, right. Keep marching.", "de"),
]


async def test_repetition_in_the_source_is_not_cut(client: httpx.AsyncClient) -> None:
    kept = []
    for text, target in ECHOED:
        r = await client.post(
            "/v1/translate", json={"text": text, "source_lang": "en", "target_lang": target}
        )
        assert r.status_code == 200, r.text
        item = r.json()["translations"][0]
        assert item["finish_reason"] == "stop", item
        words = re.findall(r"\w+", item["text"].lower())
        kept.append(max(words.count(w) for w in set(words)))
    # The model echoes most of them; each echo of 5+ copies is one the guard had to let be.
    assert max(kept) >= 5, kept
