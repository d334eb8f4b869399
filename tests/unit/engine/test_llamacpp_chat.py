"""OpenAI chat on the llama.cpp engine: the request llama-server gets (sampling, budget, slot)
and the chunks the surface gets, against an HTTP double (the real llama-server and the real
`openai` client are in tests/integration/test_llamacpp_live.py)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from dragoman.engine._llamacpp_chat import CHAT_SLOT, chat_body, generation_defaults
from dragoman.engine.protocol import ChatChunk, ChatEngine, ChatParams
from dragoman.errors import ContextTooLong, EngineDead, EngineFailed, InvalidRequest
from tests.unit.engine.test_llamacpp import Child, Endless, sse, translator

HELLO = [{"role": "user", "content": "Say hello in French"}]


def test_unset_values_are_the_models_defaults_else_neutral_not_llama_cpps() -> None:
    body = chat_body([1, 2, 3], ChatParams(), {"temperature": 0.7, "top_p": 0.8}, 512, 1)
    assert body["temperature"] == 0.7 and body["top_p"] == 0.8  # the model's
    # Neutral where the model says nothing: llama.cpp's own would be top-k 40, min-p 0.05.
    assert (body["top_k"], body["min_p"], body["repeat_penalty"]) == (0, 0.0, 1.0)
    assert (body["presence_penalty"], body["frequency_penalty"]) == (0.0, 0.0)
    assert body["n_predict"] == 512 - 3  # the context's room
    assert body["repeat_last_n"] == 512  # prompt and output, as vLLM's penalty
    assert (body["stream"], body["id_slot"], body["ignore_eos"]) == (True, 1, False)
    assert "stop" not in body
    # Unseeded: a fresh seed each time (llama-server's own would be the same for every one).
    seeds = {chat_body([1], ChatParams(), {}, 512, 0)["seed"] for _ in range(8)}
    assert len(seeds) > 1 and body["seed"] >= 0


def test_the_request_wins_and_its_budget_is_capped_to_the_room() -> None:
    params = ChatParams(
        max_tokens=1000, temperature=0.0, top_k=-1, stop=("\n",), seed=7, ignore_eos=True
    )
    body = chat_body([1] * 500, params, {"temperature": 0.7, "max_tokens": 64}, 512, 0)
    assert body["temperature"] == 0.0
    assert body["top_k"] == 1  # greedy: the top token, no pass over the vocabulary
    sampled = chat_body([1], ChatParams(temperature=0.5, top_k=-1), {}, 512, 0)
    assert sampled["top_k"] == 0  # vLLM's -1 (off) is llama.cpp's 0
    assert body["n_predict"] == 12  # asked 1000, room 12
    assert (body["stop"], body["seed"], body["ignore_eos"]) == (["\n"], 7, True)
    assert chat_body([1], ChatParams(), {"max_tokens": 64}, 512, 0)["n_predict"] == 64


def test_the_servers_cap_bounds_the_budget_whatever_is_asked() -> None:
    """The server's output limit and what the key may still spend (the service's `cap`)."""
    for params, defaults in (
        (ChatParams(cap=20), {}),  # the room alone was 511
        (ChatParams(cap=20), {"max_tokens": 64}),
        (ChatParams(max_tokens=100, cap=20, ignore_eos=True), {}),
    ):
        assert chat_body([1], params, defaults, 512, 0)["n_predict"] == 20
    assert chat_body([1], ChatParams(max_tokens=5, cap=20), {}, 512, 0)["n_predict"] == 5
    assert chat_body([1] * 500, ChatParams(cap=20), {}, 512, 0)["n_predict"] == 12


def test_an_int64_seed_is_one_llama_cpp_takes_and_never_its_random_one() -> None:
    """llama.cpp's seed is 32 bits, 0xFFFFFFFF meaning "draw one"."""
    for seed, expected in ((7, 7), (2**63 - 1, (2**63 - 1) % 0xFFFFFFFF), (-2, 0xFFFFFFFD)):
        body = chat_body([1], ChatParams(seed=seed), {}, 512, 0)
        assert body["seed"] == expected and 0 <= body["seed"] < 0xFFFFFFFF
    assert chat_body([1], ChatParams(seed=0xFFFFFFFF), {}, 512, 0)["seed"] == 0
    # -1: a fresh draw each time, as vLLM reads it
    assert len({chat_body([1], ChatParams(seed=-1), {}, 512, 0)["seed"] for _ in range(8)}) > 1


def test_generation_defaults_as_vllm_reads_them(tmp_path: Path) -> None:
    assert generation_defaults(tmp_path) == {}
    config = {"temperature": 0.6, "top_k": 20, "top_p": None, "max_new_tokens": 256, "x": 1}
    (tmp_path / "generation_config.json").write_text(json.dumps(config))
    assert generation_defaults(tmp_path) == {"temperature": 0.6, "top_k": 20, "max_tokens": 256}


async def collect(t: Any, messages: list[dict[str, str]], params: ChatParams) -> list[ChatChunk]:
    return [c async for c in t.chat(t.model_name, messages, params)]


async def test_chunks_stream_with_counts_and_finish_and_the_slot_is_marked_chat() -> None:
    seen: list[dict[str, Any]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(json.loads(request.content))
        body = sse(
            {"content": "Bon", "stop": False},
            {"content": "jour", "stop": False},
            {"content": "", "stop": True, "stop_type": "limit", "tokens_predicted": 2},
        )
        return httpx.Response(200, content=body)

    t = translator(handler)
    assert isinstance(t, ChatEngine) and list(t.chat_models()) == [t.model_name]
    chunks = await collect(t, HELLO, ChatParams(max_tokens=2))
    prompt = len(seen[0]["prompt"])
    assert prompt == 4  # the template's text, a token a word
    assert chunks == [
        ChatChunk("", prompt),
        ChatChunk("Bon", prompt, 1),
        ChatChunk("jour", prompt, 2),
        ChatChunk("", prompt, 2, "length"),
    ]
    assert seen[0]["n_predict"] == 2
    assert t._slots.key_of(seen[0]["id_slot"]) == CHAT_SLOT  # no pair's prefix is left there
    assert t.num_unfinished_requests() == 0


async def test_messages_past_the_context_are_refused_before_any_request() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        raise AssertionError("nothing should reach llama-server")

    long = [{"role": "user", "content": " ".join(["word"] * 600)}]
    with pytest.raises(ContextTooLong, match="600 tokens"):
        await collect(translator(handler), long, ChatParams())


async def test_a_refused_request_is_invalid_and_a_dead_child_is_engine_dead() -> None:
    def refuse(request: httpx.Request) -> httpx.Response:
        return httpx.Response(400, json={"error": {"code": 400, "message": "bad grammar"}})

    with pytest.raises(InvalidRequest, match="bad grammar"):
        await collect(translator(refuse), HELLO, ChatParams())

    child = Child()

    def gone(request: httpx.Request) -> httpx.Response:
        child.code = -9
        raise httpx.ConnectError("connection refused")

    with pytest.raises(EngineDead, match=r"llama-server exited \(-9\)"):
        await collect(translator(gone, child), HELLO, ChatParams())

    def cut(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=sse({"content": "Bon", "stop": False}))

    with pytest.raises(EngineFailed, match="ended before the answer"):
        await collect(translator(cut), HELLO, ChatParams())


async def test_closing_the_answer_early_closes_the_request() -> None:
    stream = Endless()
    t = translator(lambda r: httpx.Response(200, stream=stream))
    answer = t.chat(t.model_name, HELLO, ChatParams())
    async with asyncio.timeout(5):
        assert (await anext(answer)).text == ""
        assert (await anext(answer)).text == "Bon"
        await answer.aclose()
        await stream.closed.wait()
    assert t.num_unfinished_requests() == 0 and t._slots.busy() == 0
