"""Chat generation (the OpenAI surface): not a translation, so no prompts, segmentation or
guard, but the same gates as the translation service, on the same instances: refuse while
draining; the model must be served; the prompt must fit (checked before any engine work);
the caller's per-key limits, counted in characters of the messages; admission as one engine
request; the request's deadline, checked at every step of the answer."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncGenerator, Callable

from dragoman.engine.protocol import ChatChunk, ChatEngine, ChatParams, Translator
from dragoman.errors import DeadlineExceeded, ModelNotFound
from dragoman.metrics import Metrics
from dragoman.service.admission import Admission, Ticket
from dragoman.service.deadline import Deadline
from dragoman.service.keys import Caller
from dragoman.service.quota import KeyLimits


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
    ) -> None:
        self._stream = stream
        self.model = model
        self.prompt_tokens = prompt_tokens
        self._ticket = ticket
        self._deadline = deadline
        self._metrics = metrics
        self.last: ChatChunk | None = None
        """The final chunk (finish reason and token counts), once it came."""
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


class GenerationService:
    def __init__(
        self,
        translator: Callable[[], Translator],
        metrics: Metrics,
        admission: Admission,
        limits: KeyLimits,
    ) -> None:
        self._translator = translator  # raises EngineNotReady / EngineDead
        self.metrics = metrics
        self.admission = admission
        self.limits = limits
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
        stream = engine.chat(name, messages, params)
        try:
            accepted = await anext(stream)  # the prompt fits; nothing reached the engine yet
            chars = sum(len(m["content"]) for m in messages)
            self.limits.check(caller, chars)
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
        self.limits.charge(caller, chars)
        self.metrics.admitted.inc()
        if caller.name is not None:
            self.metrics.key_requests.labels(caller.name).inc()
            self.metrics.key_characters.labels(caller.name).inc(chars)
        return Generation(stream, name, accepted.prompt_tokens, ticket, deadline, self.metrics)
