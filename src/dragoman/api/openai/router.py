"""Thin handlers of the OpenAI-compatible surface: parse, call the generation service, answer."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response

from dragoman.api._disconnect import EventStream, cancel_on_disconnect
from dragoman.api.deps import CallerDep, DeadlineDep, GenerationDep
from dragoman.api.errors import render
from dragoman.api.openai import serving
from dragoman.api.openai.protocol import (
    ChatCompletion,
    ChatCompletionChunk,
    ChatCompletionRequest,
    ErrorResponse,
    Model,
    ModelList,
)
from dragoman.api.openapi import errors, event_stream
from dragoman.errors import DragomanError, EngineDead, ModelNotFound

router = APIRouter(prefix="/v1", tags=["openai"])

# In OpenAI's error shape, bad input included (400, never FastAPI's 422).
_ANY_REQUEST = {
    400: "A body nested too deep or malformed",
    401: "Missing or invalid API key (when keys are on)",
}
_ERRORS = errors(
    ErrorResponse,
    {
        **_ANY_REQUEST,
        400: "Malformed request, unsupported option, or messages too long",
        404: "No such model on this server (model_not_found)",
        413: "More characters than the key may send in a minute or a day, or body too large",
        429: "Server at its admission limit, or the key's rate limit or day quota (Retry-After)",
        503: "Engine not ready or stopped, draining, or deadline unmeetable",
        504: "The request's deadline passed; its generation was aborted",
    },
)
_MODEL_ERRORS = errors(
    ErrorResponse, {**_ANY_REQUEST, 404: "No such model on this server (model_not_found)"}
)
# With `stream`: server-sent events, `data: <chat.completion.chunk>` each (or an error in this
# surface's shape, if one comes after the stream started), then `data: [DONE]`.
_STREAMED: dict[int | str, Any] = {
    200: event_stream(
        "The completion; with `stream`, server-sent events: a chat.completion.chunk each, "
        "then `data: [DONE]`",
        ChatCompletionChunk,
        ErrorResponse,
        done="[DONE]",
    )
}


@router.get("/models", response_model=ModelList, responses=errors(ErrorResponse, _ANY_REQUEST))
async def models(caller: CallerDep, service: GenerationDep) -> ModelList:
    """The served models, by the names `model` takes."""
    return serving.models(service)


@router.get("/models/{model:path}", response_model=Model, responses=_MODEL_ERRORS)
async def model(model: str, caller: CallerDep, service: GenerationDep) -> Model:
    for m in serving.models(service).data:
        if m.id == model:
            return m
    raise ModelNotFound(f"the model {model!r} does not exist on this server")


@router.post("/chat/completions", response_model=ChatCompletion, responses={**_ERRORS, **_STREAMED})
async def chat_completions(
    body: ChatCompletionRequest,
    request: Request,
    caller: CallerDep,
    deadline: DeadlineDep,
    service: GenerationDep,
) -> ChatCompletion | Response:
    """Chat with a served model through its own chat template: straight to the engine, not a
    translation. With `stream`, server-sent events (and a usage chunk with
    `stream_options.include_usage`), ending with `data: [DONE]`."""
    if not body.stream:
        return await cancel_on_disconnect(
            request, serving.complete(body, service, caller, deadline)
        )
    gen = await cancel_on_disconnect(request, serving.start(body, service, caller, deadline))

    def error_body(exc: DragomanError) -> bytes:
        if isinstance(exc, EngineDead):
            request.app.state.engine_host.fail(exc.message)
        return bytes(render(request.scope, exc).body)

    return EventStream(serving.events(body, gen, error_body), on_close=gen.aclose)
