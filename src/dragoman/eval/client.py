"""Send every source text of a set to a server, at most `concurrency` at a time, one request a
text, and keep what came back. Two APIs: dragoman's native `POST /v1/translate`, and any
OpenAI-compatible `POST /v1/chat/completions` with a plain translation prompt (greedy), so
vLLM's own server on the same model can be measured the same way.

A failed request is recorded with its error and never stops the run; 429 and 503 answers are
retried after their Retry-After, a few times."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

import httpx

from dragoman.errors import ConfigError, Unreachable
from dragoman.eval.sets import EvalItem
from dragoman.languages import language_name

Api = Literal["native", "openai"]
RETRIES = 4
MAX_RETRY_WAIT = 30.0


@dataclass
class Output:
    text: str = ""
    finish_reason: str | None = None
    seconds: float = 0.0
    output_tokens: int | None = None
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def plain_prompt(item: EvalItem) -> str:
    """What a user wiring up a chat model by hand would write."""
    return (
        f"Translate the following text from {language_name(item.source_lang)} into "
        f"{language_name(item.target_lang)}. Output only the translation.\n\n{item.source}"
    )


class Target:
    """One server behind one API."""

    def __init__(
        self,
        url: str,
        api: Api = "native",
        *,
        model: str | None = None,
        max_tokens: int = 512,
        api_key: str | None = None,
        timeout: float = 600.0,
        transport: httpx.AsyncBaseTransport | None = None,
        candidates: int | None = None,
    ) -> None:
        self.url = url.rstrip("/")
        self.candidates = candidates
        self.api = api
        self.model = model
        self.max_tokens = max_tokens
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._headers = headers
        self._timeout = timeout
        self._transport = transport  # tests answer in-process

    def client(self, connections: int) -> httpx.AsyncClient:
        limits = httpx.Limits(max_connections=connections)
        return httpx.AsyncClient(
            base_url=self.url,
            headers=self._headers,
            timeout=self._timeout,
            limits=limits,
            transport=self._transport,
        )

    async def describe(self, client: httpx.AsyncClient) -> dict[str, Any]:
        """What the server says about itself: dragoman's /v1/info (host, engine settings,
        versions) or the OpenAI model list. Picks the OpenAI model when none was given."""
        path = "/v1/info" if self.api == "native" else "/v1/models"
        try:
            r = await client.get(path)
        except httpx.TransportError as exc:
            raise Unreachable(f"cannot reach {self.url}: {_reason(exc)}") from None
        try:
            body: Any = r.json() if r.status_code == 200 else {}
        except ValueError:
            body = {}
        if self.api == "openai" and self.model is None:
            data = body.get("data") if isinstance(body, dict) else None
            # OpenAI's entries are objects with an id; a bare name is taken as one too.
            ids = [m.get("id") if isinstance(m, dict) else m for m in data or []]
            ids = [i for i in ids if isinstance(i, str) and i]
            if not ids:
                raise ConfigError(f"{self.url}/v1/models lists no model; give --openai-model")
            self.model = ids[0]
        return {"path": path, "body": body}

    def request(self, item: EvalItem) -> tuple[str, dict[str, Any]]:
        if self.api == "native":
            body: dict[str, Any] = {
                "text": item.source,
                "source_lang": item.source_lang,
                "target_lang": item.target_lang,
            }
            if self.candidates is not None:
                body["candidates"] = self.candidates
            return "/v1/translate", body
        return "/v1/chat/completions", {
            "model": self.model,
            "messages": [{"role": "user", "content": plain_prompt(item)}],
            "temperature": 0,
            "max_tokens": self.max_tokens,
        }

    def parse(self, body: Any) -> Output:
        """The reply's text; a reply of another shape (a null, number or list where the text
        is) is a TypeError, recorded as that item's failure."""
        if self.api == "native":
            t = body["translations"][0]
            text, reason, tokens = t["text"], t.get("finish_reason"), t.get("output_tokens")
        else:
            choice = body["choices"][0]
            usage = body.get("usage")
            text = choice["message"]["content"]
            text = "" if text is None else text  # a chat reply may be empty
            reason = choice.get("finish_reason")
            tokens = usage.get("completion_tokens") if isinstance(usage, dict) else None
        if not isinstance(text, str):
            raise TypeError(f"malformed reply: text is {type(text).__name__}, not a string")
        if reason is not None and not isinstance(reason, str):
            raise TypeError(f"malformed reply: finish_reason is {type(reason).__name__}")
        if not isinstance(tokens, int) or isinstance(tokens, bool):
            tokens = None  # only recorded, never scored
        return Output(text, reason, output_tokens=tokens)

    async def translate(self, client: httpx.AsyncClient, item: EvalItem) -> Output:
        path, payload = self.request(item)
        started = time.monotonic()
        try:
            for attempt in range(RETRIES + 1):
                r = await client.post(path, json=payload)
                if r.status_code in (429, 503) and attempt < RETRIES:
                    await asyncio.sleep(_retry_after(r))
                    continue
                break
            if r.status_code != 200:
                return Output(error=f"HTTP {r.status_code}: {r.text[:300]}")
            out = self.parse(r.json())
        except (httpx.HTTPError, ValueError, KeyError, IndexError, TypeError) as exc:
            return Output(error=f"{type(exc).__name__}: {exc}"[:300])
        out.seconds = time.monotonic() - started
        return out


def _reason(exc: BaseException) -> str:
    # An exception object is always truthy; its text may still be empty (httpx's timeouts).
    return str(exc) or type(exc).__name__


def _retry_after(r: httpx.Response) -> float:
    try:
        return min(MAX_RETRY_WAIT, max(1.0, float(r.headers.get("retry-after", 1))))
    except ValueError:
        return 1.0


@dataclass
class Progress:
    """What a run has so far, kept as it comes: an interrupted run still has it."""

    server: dict[str, Any] | None = None
    outputs: dict[int, Output] = field(default_factory=dict)
    """Finished items' outputs, by the item's index."""


async def translate_all(
    target: Target,
    items: Sequence[EvalItem],
    concurrency: int = 8,
    on_done: Callable[[EvalItem, Output], None] | None = None,
    progress: Progress | None = None,
) -> tuple[list[Output], dict[str, Any]]:
    """Every item's output, in item order, and what the server said about itself."""
    gate = asyncio.Semaphore(concurrency)
    seen = progress if progress is not None else Progress()
    async with target.client(concurrency) as client:
        server = seen.server = await target.describe(client)

        async def one(n: int, item: EvalItem) -> Output:
            async with gate:
                out = await target.translate(client, item)
            seen.outputs[n] = out
            if on_done:
                on_done(item, out)
            return out

        outputs = await asyncio.gather(*(one(n, item) for n, item in enumerate(items)))
    return list(outputs), server
