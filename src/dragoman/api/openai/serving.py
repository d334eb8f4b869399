"""The OpenAI surface's side of the generation service: its request in, a completion or a
stream of server-sent events out. Checks, admission, deadlines and the engine are the
service's (dragoman.service.generation)."""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import AsyncIterator, Callable

from dragoman.api.openai.protocol import (
    AssistantMessage,
    ChatCompletion,
    ChatCompletionChunk,
    ChatCompletionRequest,
    Choice,
    ChunkChoice,
    Delta,
    Model,
    ModelList,
    Usage,
)
from dragoman.errors import DragomanError
from dragoman.service.deadline import Deadline
from dragoman.service.generation import Generation, GenerationService
from dragoman.service.keys import Caller

log = logging.getLogger(__name__)

DONE = b"data: [DONE]\n\n"

# A typed error's body in this surface's shape (the API's one error mapping).
ErrorBody = Callable[[DragomanError], bytes]


def models(service: GenerationService) -> ModelList:
    served = service.models()
    return ModelList(data=[Model(id=m, created=service.created, root=r) for m, r in served.items()])


def _usage(gen: Generation) -> Usage:
    made = gen.last.completion_tokens if gen.last else 0
    return Usage(
        prompt_tokens=gen.prompt_tokens,
        completion_tokens=made,
        total_tokens=gen.prompt_tokens + made,
    )


async def start(
    req: ChatCompletionRequest, service: GenerationService, caller: Caller, deadline: Deadline
) -> Generation:
    """Checked and admitted: a refusal keeps its HTTP status even for a stream, which only
    starts after this."""
    return await service.start(req.model, req.template_messages(), req.params(), caller, deadline)


async def complete(
    req: ChatCompletionRequest, service: GenerationService, caller: Caller, deadline: Deadline
) -> ChatCompletion:
    gen = await start(req, service, caller, deadline)
    try:
        text = "".join([chunk.text async for chunk in gen])
    finally:
        await gen.aclose()
    assert gen.last is not None and gen.last.finish_reason is not None  # the stream's contract
    return ChatCompletion(
        id=f"chatcmpl-{uuid.uuid4().hex}",
        created=int(time.time()),
        model=gen.model,
        choices=[
            Choice(
                message=AssistantMessage(content=text),
                finish_reason=gen.last.finish_reason,
            )
        ],
        usage=_usage(gen),
    )


async def events(
    req: ChatCompletionRequest, gen: Generation, error_body: ErrorBody
) -> AsyncIterator[bytes]:
    """The answer as chat.completion.chunk events. The role comes with the first engine output
    (not at once), so a client's time to first token means the model's. An error after the
    response started is an `error` event, then [DONE]."""
    rid, created = f"chatcmpl-{uuid.uuid4().hex}", int(time.time())

    def event(choices: list[ChunkChoice], usage: Usage | None = None) -> bytes:
        chunk = ChatCompletionChunk(
            id=rid, created=created, model=gen.model, choices=choices, usage=usage
        )
        return b"data: " + chunk.model_dump_json().encode() + b"\n\n"

    started = False
    try:
        async for chunk in gen:
            if not started:
                started = True
                yield event([ChunkChoice(delta=Delta(role="assistant", content=""))])
            if chunk.text:
                yield event([ChunkChoice(delta=Delta(content=chunk.text))])
            if chunk.finish_reason is not None:
                yield event([ChunkChoice(delta=Delta(), finish_reason=chunk.finish_reason)])
        if req.include_usage:
            yield event([], _usage(gen))
    except DragomanError as exc:
        yield b"data: " + error_body(exc) + b"\n\n"
    except Exception:
        log.exception("chat stream failed")
        yield b"data: " + error_body(DragomanError("internal server error")) + b"\n\n"
    finally:
        await gen.aclose()
    yield DONE
