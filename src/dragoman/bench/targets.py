"""What the load generator talks to: a dragoman server, or vLLM's own OpenAI-compatible server
driven with the same prompt and decoding settings (the peer a user would otherwise pick)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

import httpx

from dragoman.engine.prompts import chat_messages
from dragoman.eval.workloads import Item


@dataclass
class Reply:
    status: int
    input_tokens: int = 0
    output_tokens: int = 0
    queue_seconds: float | None = None
    inference_seconds: float | None = None
    text: str = ""
    error: str | None = None


class Target(Protocol):
    name: str

    async def send(self, client: httpx.AsyncClient, item: Item) -> Reply: ...


@dataclass
class DragomanTarget:
    url: str
    name: str = "dragoman"
    extra: dict[str, Any] = field(default_factory=dict)
    """More fields of every request's body (`candidates`, `quality`)."""

    async def send(self, client: httpx.AsyncClient, item: Item) -> Reply:
        sent = {"text": item.text, "source_lang": item.source, "target_lang": item.target}
        r = await client.post(f"{self.url}/v1/translate", json={**sent, **self.extra})
        body: dict[str, Any] = r.json()
        if r.status_code != 200:
            return Reply(r.status_code, error=str(body.get("error", body)))
        t = body["translations"][0]
        return Reply(
            200,
            t["input_tokens"],
            t["output_tokens"],
            t["queue_seconds"],
            t["inference_seconds"],
            t["text"],
        )


@dataclass
class OpenAITarget:
    """vLLM's /v1/chat/completions with our chat prompt, greedy decoding, our repetition
    penalty, and the max_tokens our server would allow (computed with the same tokenizer)."""

    url: str
    model: str
    budget: Any  # callable(Item) -> max_tokens
    repetition_penalty: float
    name: str = "vllm-serve"

    async def send(self, client: httpx.AsyncClient, item: Item) -> Reply:
        r = await client.post(
            f"{self.url}/v1/chat/completions",
            json={
                "model": self.model,
                "messages": chat_messages(item.text, item.source, item.target),
                "temperature": 0.0,
                "max_tokens": self.budget(item),
                "repetition_penalty": self.repetition_penalty,
            },
        )
        body: dict[str, Any] = r.json()
        if r.status_code != 200:
            return Reply(r.status_code, error=str(body.get("error", body))[:300])
        usage = body.get("usage") or {}
        return Reply(
            200,
            int(usage.get("prompt_tokens", 0)),
            int(usage.get("completion_tokens", 0)),
            None,
            None,
            body["choices"][0]["message"]["content"],
        )
