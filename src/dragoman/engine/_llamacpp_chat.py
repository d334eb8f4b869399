"""OpenAI chat on the llama.cpp engine, as on vLLM (engine/vllm_engine.py): the messages through
the model's own chat template (the tokenizer's, so both engines see the same prompt tokens),
the request's sampling over the model's generation defaults over neutral ones, the answer
streamed from llama-server's /completion in one of the translator's slots. No translation
prompt, guard or output cleaning: chat is not translation."""

from __future__ import annotations

import json
import random
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx

from dragoman.engine._llamacpp_process import error_message, stream_messages
from dragoman.engine.protocol import ChatChunk, ChatFinish, ChatParams, chat_budget
from dragoman.errors import ContextTooLong, EngineFailed, InvalidRequest

# The slot key of a chat request: a slot that ran one holds no pair's translation prefix.
CHAT_SLOT = "chat"

# What vLLM takes from a model's generation_config.json for chat (ModelConfig's
# get_diff_sampling_param), with the neutral value used where the model sets none.
_NEUTRAL: dict[str, float] = {
    "temperature": 1.0,
    "top_p": 1.0,
    "top_k": 0,
    "min_p": 0.0,
    "repetition_penalty": 1.0,
    "presence_penalty": 0.0,
    "frequency_penalty": 0.0,
}


def generation_defaults(model_dir: str | Path) -> dict[str, Any]:
    """The model's own sampling defaults (and `max_tokens` from max_new_tokens), as vLLM reads
    them; {} when it has no generation config."""
    try:
        config = json.loads((Path(model_dir) / "generation_config.json").read_text())
    except (OSError, ValueError):
        return {}
    out = {k: config[k] for k in _NEUTRAL if config.get(k) is not None}
    if config.get("max_new_tokens") is not None:
        out["max_tokens"] = config["max_new_tokens"]
    return out


def chat_prompt(tokenizer: Any, messages: list[dict[str, str]], max_model_len: int) -> list[int]:
    """The prompt's token ids; InvalidRequest if the template refuses the messages,
    ContextTooLong if they leave no room for an answer."""
    try:
        text = tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    except Exception as exc:  # the template's own checks (role order, ...)
        raise InvalidRequest(f"the model's chat template refused the messages: {exc}") from exc
    ids = list(tokenizer.encode(text, add_special_tokens=False))
    if max_model_len - len(ids) < 1:
        raise ContextTooLong(
            f"the messages are {len(ids)} tokens, which leaves no room for an answer in "
            f"this model's context of {max_model_len} tokens"
        )
    return ids


def chat_body(
    ids: list[int], params: ChatParams, defaults: dict[str, Any], max_model_len: int, slot: int
) -> dict[str, Any]:
    """A streamed /completion request. Every sampling value is set, since llama.cpp's own
    defaults (temperature 0.8, top-k 40, ...) are neither vLLM's nor the model's; top-k 0 is
    off in both. The repetition penalty looks back over prompt and output, as vLLM's does."""
    room = max_model_len - len(ids)
    given = {
        "temperature": params.temperature,
        "top_p": params.top_p,
        "top_k": params.top_k,
        "min_p": params.min_p,
        "repetition_penalty": params.repetition_penalty,
        "presence_penalty": params.presence_penalty,
        "frequency_penalty": params.frequency_penalty,
    }
    value = {k: v if v is not None else defaults.get(k, _NEUTRAL[k]) for k, v in given.items()}
    body: dict[str, Any] = {
        "prompt": ids,
        "n_predict": chat_budget(params, defaults.get("max_tokens"), room),
        "temperature": value["temperature"],
        "top_p": value["top_p"],
        # -1 (vLLM's off) is 0 here. Greedy is top-k 1: the same token, without sampling
        # passes over the whole vocabulary (151k entries for this model) at every step.
        "top_k": 1 if value["temperature"] == 0 else max(0, int(value["top_k"])),
        "min_p": value["min_p"],
        "repeat_penalty": value["repetition_penalty"],
        "repeat_last_n": max_model_len,
        "presence_penalty": value["presence_penalty"],
        "frequency_penalty": value["frequency_penalty"],
        "ignore_eos": params.ignore_eos,
        "stream": True,
        "cache_prompt": True,
        "id_slot": slot,
    }
    if params.stop:
        body["stop"] = list(params.stop)
    # Unseeded is a fresh draw each time, as on vLLM (llama-server would take its own seed, 0,
    # for every request: the same answer to the same sampled question).
    # llama.cpp's seed is 32 bits, and 0xFFFFFFFF asks it for a random one: an int64 seed (the
    # API's range, as vLLM's) maps onto the others, the same seed to the same one
    # (-1 is a fresh draw, as vLLM reads it)
    seed = params.seed if params.seed not in (None, -1) else random.getrandbits(31)
    body["seed"] = seed % 0xFFFFFFFF
    return body


async def stream_chat(client: httpx.AsyncClient, body: dict[str, Any]) -> AsyncIterator[ChatChunk]:
    """The answer's chunks (after the first, which the caller gives). Leaving early closes the
    connection, and llama-server stops a slot whose client is gone."""
    prompt_tokens = len(body["prompt"])
    made = 0
    async with client.stream("POST", "/completion", json=body) as r:
        if r.status_code != 200:
            await r.aread()
            if r.status_code == 400:
                raise InvalidRequest(f"llama-server refused the request: {error_message(r)}")
            raise EngineFailed(f"llama-server answered {r.status_code}: {error_message(r)}")
        async for msg in stream_messages(r):
            text = msg.get("content") or ""
            if not msg.get("stop"):
                made += 1  # a message a token (its text may wait for the rest of a character)
                if text:
                    yield ChatChunk(text, prompt_tokens, made)
                continue
            made = int(msg.get("tokens_predicted", made))
            finish: ChatFinish = "length" if msg.get("stop_type") == "limit" else "stop"
            yield ChatChunk(text, prompt_tokens, made, finish)
            return
    raise EngineFailed("llama-server's stream ended before the answer did")
