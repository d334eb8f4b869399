"""Which llama-server slot a request runs in: the pair's last slot, then an unused one, never
the last holder of another pair while a slot with a duplicate is idle; all busy waits. And the
prefix bank against an HTTP double of llama-server's slots (the real server: the llama.cpp
engine's live tests)."""

from __future__ import annotations

import asyncio
import json
from contextlib import AsyncExitStack
from typing import Any

import httpx
import pytest

from dragoman.engine._llamacpp_slots import SlotPicker
from dragoman.engine.llamacpp import LlamaCppTranslator
from dragoman.settings import EngineSettings
from tests.unit.engine.test_llamacpp import Child, WordTokenizer


async def run(picker: SlotPicker, key: str) -> int:
    async with picker.hold(key) as slot:
        return slot


async def test_a_pair_returns_to_the_slot_that_ran_it_last() -> None:
    picker = SlotPicker(4)
    fr = await run(picker, "en-fr")
    de = await run(picker, "en-de")
    assert de != fr  # an unused slot, not the one holding en-fr
    assert await run(picker, "en-fr") == fr
    assert await run(picker, "en-de") == de
    assert await run(picker, "en-fr") == fr


async def test_of_a_pairs_slots_the_one_whose_last_prompt_shares_most_is_taken() -> None:
    picker = SlotPicker(4)
    async with AsyncExitStack() as stack:
        a = await stack.enter_async_context(picker.hold("en-fr", [1, 2, 3, 4, 5]))
        b = await stack.enter_async_context(picker.hold("en-fr", [1, 2, 3, 9, 9]))
    async with picker.hold("en-fr", [1, 2, 3, 4, 5, 6]) as again:  # asked again, with a note
        assert again == a
    async with picker.hold("en-fr", [1, 2, 3, 9, 9]) as repeat:
        assert repeat == b
    async with picker.hold("en-fr", [1, 2, 7]) as neither:  # as much in each: the latest
        assert neither == b


async def test_concurrent_requests_of_a_pair_take_its_slots_then_unused_ones() -> None:
    picker = SlotPicker(4)
    async with AsyncExitStack() as stack:
        first = [await stack.enter_async_context(picker.hold("en-fr")) for _ in range(3)]
    assert sorted(first) == [0, 1, 2]
    de = await run(picker, "en-de")
    assert de == 3  # the one unused slot
    async with AsyncExitStack() as stack:
        again = [await stack.enter_async_context(picker.hold("en-fr")) for _ in range(3)]
    assert sorted(again) == sorted(first)  # its three slots, en-de's kept


async def test_when_all_were_used_the_pair_with_most_slots_gives_one_up() -> None:
    picker = SlotPicker(3)
    async with AsyncExitStack() as stack:
        fr = [await stack.enter_async_context(picker.hold("en-fr")) for _ in range(2)]
    de = await run(picker, "en-de")
    es = await run(picker, "en-es")
    assert es in fr  # en-fr held two; en-de's only slot is kept
    assert es == fr[1]  # of en-fr's two, the one released first (least recently used)
    assert await run(picker, "en-de") == de
    # One pair a slot now: the least recently used gives way, en-fr's remaining slot.
    assert await run(picker, "en-ko") == fr[0]
    assert picker.busy() == 0


async def test_all_busy_waits_in_arrival_order_and_a_cancelled_wait_takes_nothing() -> None:
    picker = SlotPicker(1)
    order: list[str] = []
    release, held = asyncio.Event(), asyncio.Event()

    async def holder() -> None:
        async with picker.hold("en-fr"):
            held.set()
            await release.wait()

    async def waiter(name: str) -> None:
        async with picker.hold("en-fr"):
            order.append(name)

    first = asyncio.create_task(holder())
    await asyncio.wait_for(held.wait(), 5)
    assert picker.busy() == 1
    a = asyncio.create_task(waiter("a"))
    gone = asyncio.create_task(waiter("gone"))
    b = asyncio.create_task(waiter("b"))
    await asyncio.sleep(0)  # all three wait for the one slot
    gone.cancel()
    release.set()
    await asyncio.wait_for(asyncio.gather(first, a, b), 5)
    assert order == ["a", "b"]
    assert gone.cancelled()
    assert picker.busy() == 0


async def test_a_request_that_fails_gives_its_slot_back() -> None:
    picker = SlotPicker(1)
    try:
        async with picker.hold("en-fr"):
            raise RuntimeError("llama-server went away")
    except RuntimeError:
        pass
    assert picker.busy() == 0
    assert await asyncio.wait_for(run(picker, "en-de"), 5) == 0


class Server:
    """llama-server as the translator sees it: slots that keep their last prompt, save and
    restore; every request recorded."""

    def __init__(self, save_status: int = 200) -> None:
        self.seen: list[tuple[str, dict[str, Any]]] = []
        self.files: dict[str, list[int]] = {}
        self.held: dict[int, list[int]] = {}
        self.save_status = save_status
        self.gate: asyncio.Event | None = None  # holds completions while unset

    async def __call__(self, request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        path = request.url.path
        self.seen.append((path + "?" + request.url.query.decode(), body))
        if self.gate is not None and path == "/completion":
            await self.gate.wait()
        if path.startswith("/slots/"):
            slot, action = int(path.rsplit("/", 1)[1]), request.url.params["action"]
            if action == "save":
                if self.save_status != 200:
                    return httpx.Response(self.save_status, json={"error": {"message": "no"}})
                self.files[body["filename"]] = self.held[slot]
            else:
                self.held[slot] = self.files[body["filename"]]
            return httpx.Response(200, json={"id_slot": slot})
        self.held[body["id_slot"]] = body["prompt"]
        return httpx.Response(
            200, json={"stop": True, "stop_type": "eos", "content": "Oui.", "tokens": [1]}
        )

    def actions(self) -> list[str]:
        return [p for p, _ in self.seen if p.startswith("/slots/")]

    def prefixes(self) -> list[dict[str, Any]]:
        return [b for p, b in self.seen if p.startswith("/completion") and b["n_predict"] == 1]


def translator(server: Server, slots: int = 4) -> LlamaCppTranslator:
    settings = EngineSettings(max_model_len=512, max_num_seqs=slots)
    client = httpx.AsyncClient(base_url=Child.url, transport=httpx.MockTransport(server))
    return LlamaCppTranslator(
        client, Child(), settings, WordTokenizer(), ("en", "fr", "de"), prefix_bank=True
    )


async def test_a_pairs_prefix_is_computed_once_saved_and_restored_into_other_slots() -> None:
    server = Server()
    t = translator(server)
    await t.translate("Thank you.", "en", "fr")
    prefix = t.prompts.shared_prefix("en", "fr")
    assert [b["prompt"] for b in server.prefixes()] == [prefix]  # computed alone, one token
    assert server.actions() == ["/slots/0?action=save"]
    await t.translate("Good night.", "en", "fr")  # its slot holds it: nothing to load
    assert len(server.actions()) == 1
    await t.translate("Thank you.", "en", "de")  # another pair: its own prefix, slot 1
    assert server.actions()[-1] == "/slots/1?action=save"
    # Two at once: the pair's slot and one more, which restores the pair's saved prefix.
    server.gate = asyncio.Event()
    both = asyncio.gather(t.translate("One.", "en", "fr"), t.translate("Two.", "en", "fr"))
    await until(lambda: t._slots.busy() == 2)
    server.gate.set()
    await asyncio.wait_for(both, 5)
    assert server.actions()[-1] == "/slots/2?action=restore"
    assert server.held[2][: len(prefix)] == prefix
    assert len(server.prefixes()) == 2  # still computed once a pair


async def test_sentences_of_a_new_pair_wait_for_its_prefix_instead_of_each_computing_it() -> None:
    server = Server()
    t = translator(server, slots=4)
    server.gate = asyncio.Event()
    texts = [f"Sentence number {i}." for i in range(4)]
    every = asyncio.gather(*(t.translate(x, "en", "fr") for x in texts))
    # One computes the prefix (held at the gate); the other three hold slots and wait for it.
    await until(lambda: t._slots.busy() == 4 and len(server.seen) == 1)
    server.gate.set()
    out = await asyncio.wait_for(every, 5)
    assert [o.text for o in out] == ["Oui."] * 4
    assert len(server.prefixes()) == 1
    assert sorted(server.actions()) == [
        "/slots/0?action=save",
        "/slots/1?action=restore",
        "/slots/2?action=restore",
        "/slots/3?action=restore",
    ]


async def test_a_server_that_cannot_save_slots_turns_the_bank_off_and_still_answers(
    caplog: pytest.LogCaptureFixture,
) -> None:
    server = Server(save_status=501)
    t = translator(server)
    out = await t.translate("Thank you.", "en", "fr")
    assert out.text == "Oui."
    await t.translate("Thank you.", "en", "de")
    assert server.actions() == ["/slots/0?action=save"]  # tried once, then not again
    assert len(server.prefixes()) == 1
    assert "prompt prefixes are computed in each slot" in caplog.text


async def until(condition: Any, within: float = 5.0) -> None:
    """Poll `condition` until true, failing after `within` seconds (no fixed sleeps)."""
    loop = asyncio.get_running_loop()
    end = loop.time() + within
    while not condition():
        assert loop.time() < end, "condition not met in time"
        await asyncio.sleep(0.005)
