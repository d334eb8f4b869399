"""Chat generation (the OpenAI surface): not a translation, so no prompts, segmentation or
guard, but the same gates as the translation service, on the same instances: refuse while
draining; the model must be served; the prompt must fit (checked before any engine work);
the caller's per-key limits; admission as one engine request; the request's deadline, checked
at every step of the answer.

A chat request is charged in the characters the key limits count: its messages' characters,
and CHARS_PER_TOKEN for each token it generates. Its answer (`max_tokens` or not, which is an
upper bound, as the context's room caps it too) is capped by the server's output limit
(--max-output-tokens) and by what the key may still spend: the rest of its day's quota, at most
its whole minute's limit. At admission the most it may cost is charged (a reservation, so
concurrent requests cannot spend the same quota twice), lowered to the tokens really generated
once it ends. A key that cannot pay for its messages and one token is refused as on any
surface: 429 `quota_exceeded` until midnight UTC, or `rate_limited` with a Retry-After while
its minute is used up. `ignore_eos` is honoured: it makes an answer as long as the cap, and it
is charged for each token of it."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncGenerator, Callable
from dataclasses import replace

from dragoman.engine.protocol import ChatChunk, ChatEngine, ChatParams, Translator
from dragoman.errors import (
    DeadlineExceeded,
    ModelNotFound,
    QuotaExceeded,
    RateLimited,
    TextTooLong,
)
from dragoman.metrics import Metrics
from dragoman.service.admission import Admission, Ticket
from dragoman.service.deadline import Deadline
from dragoman.service.keys import Caller
from dragoman.service.quota import Charge, KeyLimits

CHARS_PER_TOKEN = 4
"""What a generated token costs a key, in the characters its limits count (a token of English
text is about four characters)."""


class Generation:
    """One admitted chat request: iterate it for the answer's chunks. It holds its admission
    place until it ends; it is aborted in the engine when its deadline passes, when its
    consumer is cancelled, when it is closed before the end, or when the server stops before
    it ends (`Admission.abort`: ShutDown, 503 `draining`). `aclose` is safe to repeat and must
    be called however the request ends (it frees the place even if never iterated)."""

    def __init__(
        self,
        stream: AsyncGenerator[ChatChunk, None],
        model: str,
        prompt_tokens: int,
        ticket: Ticket,
        deadline: Deadline,
        metrics: Metrics,
        on_end: Callable[[int], None] = lambda made: None,
    ) -> None:
        self._stream = stream
        self.model = model
        self.prompt_tokens = prompt_tokens
        self._ticket = ticket
        self._deadline = deadline
        self._metrics = metrics
        self._on_end = on_end  # given the tokens generated, once it ends
        self.last: ChatChunk | None = None
        """The final chunk (finish reason and token counts), once it came."""
        self.made = 0
        """Tokens generated so far (each chunk carries the count)."""
        self._open = True

    def __aiter__(self) -> Generation:
        return self

    async def __anext__(self) -> ChatChunk:
        if not self._open:
            raise StopAsyncIteration
        self._ticket.waiting_in(asyncio.current_task())
        try:
            self._ticket.check_aborted()  # the server stopped between two chunks
            async with asyncio.timeout(max(0.0, self._deadline.remaining())):
                chunk = await anext(self._stream)
        except StopAsyncIteration:
            await self.aclose()
            raise
        except TimeoutError:
            self._metrics.expired.inc()
            await self.aclose()
            raise DeadlineExceeded(
                f"the request's deadline of {self._deadline.seconds:g} s passed; the answer "
                "was aborted"
            ) from None
        except asyncio.CancelledError as cancelled:
            try:
                stopped = self._ticket.aborted_by(cancelled)  # the server stopped; else re-raised
            finally:
                await self.aclose()
            raise stopped from None
        except BaseException:
            await self.aclose()
            raise
        finally:
            self._ticket.waiting_in(None)
        self.made = max(self.made, chunk.completion_tokens)
        if chunk.finish_reason is not None:
            self.last = chunk
            self._ticket.done_one()
            self._metrics.chat_completions.labels(chunk.finish_reason).inc()
            self._metrics.chat_tokens.labels("input").inc(chunk.prompt_tokens)
            self._metrics.chat_tokens.labels("output").inc(chunk.completion_tokens)
        return chunk

    async def aclose(self) -> None:
        if not self._open:
            return
        self._open = False
        if self.last is None:
            self._metrics.aborted.inc()
        try:
            await self._stream.aclose()  # aborts the engine request if it is still running
        finally:
            self._ticket.release()
            self._on_end(self.made)


class GenerationService:
    def __init__(
        self,
        translator: Callable[[], Translator],
        metrics: Metrics,
        admission: Admission,
        limits: KeyLimits,
        max_output_tokens: int,
    ) -> None:
        self._translator = translator  # raises EngineNotReady / EngineDead
        self.metrics = metrics
        self.admission = admission
        self.limits = limits
        self.max_output_tokens = max_output_tokens
        self.created = int(time.time())

    def models(self) -> dict[str, str]:
        """The models chat serves, name -> root (none when the engine cannot chat, as the
        baselines)."""
        engine = self._translator()
        return engine.chat_models() if isinstance(engine, ChatEngine) else {}

    async def start(
        self,
        model: str | None,
        messages: list[dict[str, str]],
        params: ChatParams,
        caller: Caller,
        deadline: Deadline,
    ) -> Generation:
        """Check and admit a chat request; its answer is the returned Generation's to give.
        `model` None means the first served model."""
        self.admission.check_open()  # a draining server says so before anything else
        engine = self._translator()
        if not isinstance(engine, ChatEngine) or not engine.chat_models():
            raise ModelNotFound("this server's engine serves no chat model")
        served = list(engine.chat_models())
        name = model if model is not None else served[0]
        if name not in served:
            raise ModelNotFound(
                f"the model {name!r} does not exist on this server; it serves "
                f"{', '.join(repr(s) for s in served)} (GET /v1/models)"
            )
        chars = sum(len(m["content"]) for m in messages)
        cap = self._cap(caller, chars, params.max_tokens)
        stream = engine.chat(name, messages, replace(params, cap=cap))
        try:
            accepted = await anext(stream)  # the prompt fits; nothing reached the engine yet
            reserved = chars + CHARS_PER_TOKEN * cap  # the most the answer may cost
            self._check(caller, chars, cap)
            remaining = deadline.remaining()
            if remaining <= 0:
                self.metrics.expired.inc()
                raise DeadlineExceeded(
                    f"the request's deadline of {deadline.seconds:g} s passed before it was "
                    "admitted"
                )
            ticket = self.admission.admit(1, remaining)
        except BaseException:
            await stream.aclose()
            raise
        # Nothing awaited since the checks: the key's use and the admission agree.
        charge = self.limits.charge(caller, reserved)
        self.metrics.admitted.inc()
        if caller.name is not None:
            self.metrics.key_requests.labels(caller.name).inc()

        def settle(made: int) -> None:
            self._settle(charge, chars + CHARS_PER_TOKEN * made)

        return Generation(
            stream, name, accepted.prompt_tokens, ticket, deadline, self.metrics, settle
        )

    def _cap(self, caller: Caller, chars: int, asked: int | None) -> int:
        """The most tokens the answer may have: what the client asked, within the server's
        output limit and what the key may still spend beyond the messages (at least one
        token: a key with nothing left is refused by its limits' check)."""
        cap = min(asked or self.max_output_tokens, self.max_output_tokens)
        room = self.limits.room(caller)
        if room is not None:
            cap = min(cap, max(1, (room - chars) // CHARS_PER_TOKEN))
        return cap

    def _check(self, caller: Caller, chars: int, cap: int) -> None:
        """The key's limits for the most the request may cost, a refusal saying what that
        is made of."""
        try:
            self.limits.check(caller, chars + CHARS_PER_TOKEN * cap)
        except (QuotaExceeded, RateLimited, TextTooLong) as exc:
            why = (
                f"{exc.message}; a chat request is charged its messages' characters (here "
                f"{chars}) and {CHARS_PER_TOKEN} for each token of its answer (here at most {cap})"
            )
            raise type(exc)(why, exc.retry_after) from None

    def _settle(self, charge: Charge, spent: int) -> None:
        """The reservation lowered to what the request spent (its messages and the tokens
        generated: one that failed or lost its client pays for what was made)."""
        self.limits.settle(charge, spent)
        if charge.caller.name is not None:
            self.metrics.key_characters.labels(charge.caller.name).inc(charge.chars)
