"""Request and response models of the OpenAI-compatible surface (chat completions, models).
Unknown fields are ignored, as OpenAI's and vLLM's servers do; fields that would change what
the client expects back and that dragoman cannot honour are refused (see the package doc)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator
from pydantic_core import PydanticCustomError

from dragoman.api.openapi import exactly
from dragoman.engine.protocol import ChatFinish, ChatParams


def _refuse(message: str) -> PydanticCustomError:
    return PydanticCustomError("unsupported", message)


class TextPart(BaseModel):
    type: Literal["text"]
    text: str


class ChatMessage(BaseModel):
    role: Literal["system", "developer", "user", "assistant"]
    content: str | list[TextPart] = Field(
        description="A string, or a list of text parts (joined with newlines)."
    )

    @field_validator("content", mode="before")
    @classmethod
    def _text_parts_only(cls, value: Any) -> Any:
        if isinstance(value, list):
            for part in value:
                kind = part.get("type") if isinstance(part, dict) else None
                if kind != "text":
                    raise _refuse(f"only text content parts are supported, not {kind!r}")
        return value

    def as_template_input(self) -> dict[str, str]:
        """`{role, content}` for the model's chat template. `developer` is OpenAI's new name
        for `system`, which is the one chat templates know."""
        text = (
            self.content
            if isinstance(self.content, str)
            else "\n".join(p.text for p in self.content)
        )
        return {"role": "system" if self.role == "developer" else self.role, "content": text}


_META = {"title", "description", "default", "examples"}


def _nullable_optionals(schema: dict[str, Any]) -> None:
    """The document says so too: every optional field may be null."""
    required = set(schema.get("required", ()))
    for name, prop in schema.get("properties", {}).items():
        options = prop.get("anyOf", [prop])
        if name in required or any(o.get("type") == "null" for o in options):
            continue
        kept = {k: v for k, v in prop.items() if k not in _META}
        for key in kept:
            del prop[key]
        prop["anyOf"] = [kept, {"type": "null"}]


class _NullIsDefault(BaseModel):
    """An optional field sent as `null` takes its default, as OpenAI's and vLLM's servers read
    it: the openai SDK's types allow None for every optional parameter (`n`, `stream`, ...),
    and a client passing them through must not be refused for it."""

    model_config = ConfigDict(json_schema_extra=_nullable_optionals)

    @model_validator(mode="before")
    @classmethod
    def _drop_nulls(cls, data: Any) -> Any:
        if not isinstance(data, dict) or all(v is not None for v in data.values()):
            return data  # the commonest: nothing to drop, nothing rebuilt
        fields = cls.model_fields
        return {
            k: v
            for k, v in data.items()
            if v is not None or k not in fields or fields[k].is_required()
        }


class StreamOptions(_NullIsDefault):
    model_config = ConfigDict(strict=True)

    include_usage: bool = False


def _or_null(schema: dict[str, Any]) -> Any:
    return exactly(anyOf=[schema, {"type": "null"}])


# A stop sequence is not empty.
_STOP = {"type": "string", "minLength": 1}


class ChatCompletionRequest(_NullIsDefault):
    # JSON as Python reads it takes Infinity and NaN: no sampling setting is either. Strict, as
    # OpenAI's own API is: a number is not a string holding one, a boolean not a string or a
    # number. The integers are read by `_an_integer` (5.0 is one, as JSON Schema has it).
    model_config = ConfigDict(allow_inf_nan=False, strict=True)

    model: str | None = Field(
        default=None, description="A served model (GET /v1/models); absent: the first one."
    )
    messages: list[ChatMessage] = Field(min_length=1)
    stream: bool = False
    stream_options: StreamOptions | None = None
    max_tokens: int | None = Field(default=None, strict=False, ge=1)
    max_completion_tokens: int | None = Field(
        default=None,
        strict=False,
        ge=1,
        description="Wins over max_tokens. Either is capped to the context.",
    )
    temperature: float | None = Field(default=None, ge=0, le=2)
    top_p: float | None = Field(default=None, gt=0, le=1)
    presence_penalty: float | None = Field(default=None, ge=-2, le=2)
    frequency_penalty: float | None = Field(default=None, ge=-2, le=2)
    stop: str | list[str] | None = Field(
        default=None,
        json_schema_extra=exactly(
            anyOf=[_STOP, {"type": "array", "items": _STOP}, {"type": "null"}]
        ),
    )
    # as vLLM's: int64
    seed: int | None = Field(default=None, strict=False, ge=-(2**63), le=2**63 - 1)
    # vLLM's extras (its benchmark sends them)
    top_k: int | None = Field(default=None, strict=False, ge=-1, description="0 or -1: off.")
    min_p: float | None = Field(default=None, ge=0, le=1)
    repetition_penalty: float | None = Field(default=None, gt=0)
    ignore_eos: bool = False
    # Refused unless they ask for nothing dragoman would not give.
    n: int = Field(
        default=1,
        strict=False,
        description="One choice only.",
        json_schema_extra=_or_null({"type": "integer", "enum": [1]}),
    )
    logprobs: bool | None = Field(
        default=None,
        description="Not supported: false or null only.",
        json_schema_extra=_or_null({"type": "boolean", "enum": [False]}),
    )
    top_logprobs: int | None = Field(
        default=None,
        strict=False,
        description="Not supported: 0 or null only.",
        json_schema_extra=_or_null({"type": "integer", "enum": [0]}),
    )
    tools: list[Any] | None = Field(
        default=None,
        description="Function calling is not supported: an empty list or null only.",
        json_schema_extra=_or_null({"type": "array", "maxItems": 0}),
    )
    response_format: dict[str, Any] | None = Field(
        default=None,
        description="Text only.",
        json_schema_extra=_or_null(
            {"type": "object", "properties": {"type": {"type": "string", "enum": ["text"]}}}
        ),
    )

    @field_validator(
        "max_tokens", "max_completion_tokens", "seed", "top_k", "n", "top_logprobs", mode="before"
    )
    @classmethod
    def _an_integer(cls, value: Any) -> Any:
        """An integer as JSON has one (5, or 5.0), not a string holding one nor a boolean."""
        if isinstance(value, str | bool):
            raise PydanticCustomError("int_type", "Input should be a valid integer")
        return value

    @field_validator("n")
    @classmethod
    def _one_choice(cls, value: int) -> int:
        if value != 1:
            raise _refuse("only n=1 (one choice) is supported")
        return value

    @field_validator("logprobs", "top_logprobs")
    @classmethod
    def _no_logprobs(cls, value: bool | int | None) -> bool | int | None:
        if value:
            raise _refuse("log probabilities are not supported")
        return value

    @field_validator("tools")
    @classmethod
    def _no_tools(cls, value: list[Any] | None) -> list[Any] | None:
        if value:
            raise _refuse("tools (function calling) are not supported")
        return value

    @field_validator("response_format")
    @classmethod
    def _text_only(cls, value: dict[str, Any] | None) -> dict[str, Any] | None:
        if value is not None and value.get("type", "text") != "text":
            raise _refuse(f"only the text response format is supported, not {value.get('type')!r}")
        return value

    @field_validator("stop")
    @classmethod
    def _stops(cls, value: str | list[str] | None) -> str | list[str] | None:
        stops = [value] if isinstance(value, str) else value or []
        if any(not s for s in stops):
            raise _refuse("stop sequences must not be empty")
        return value

    def template_messages(self) -> list[dict[str, str]]:
        return [m.as_template_input() for m in self.messages]

    def params(self) -> ChatParams:
        stop = [self.stop] if isinstance(self.stop, str) else self.stop or []
        return ChatParams(
            max_tokens=self.max_completion_tokens or self.max_tokens,
            temperature=self.temperature,
            top_p=self.top_p,
            top_k=self.top_k,
            min_p=self.min_p,
            repetition_penalty=self.repetition_penalty,
            presence_penalty=self.presence_penalty,
            frequency_penalty=self.frequency_penalty,
            ignore_eos=self.ignore_eos,
            stop=tuple(stop),
            seed=self.seed,
        )

    @property
    def include_usage(self) -> bool:
        return self.stream_options is not None and self.stream_options.include_usage


class Usage(BaseModel):
    prompt_tokens: int
    completion_tokens: int
    total_tokens: int


class AssistantMessage(BaseModel):
    role: Literal["assistant"] = "assistant"
    content: str


class Choice(BaseModel):
    index: int = 0
    message: AssistantMessage
    finish_reason: ChatFinish
    logprobs: None = None


class ChatCompletion(BaseModel):
    id: str
    object: Literal["chat.completion"] = "chat.completion"
    created: int
    model: str
    choices: list[Choice]
    usage: Usage


def _absent(value: object) -> bool:
    return value is None


class Delta(BaseModel):
    role: Literal["assistant"] | None = Field(default=None, exclude_if=_absent)
    content: str | None = Field(default=None, exclude_if=_absent)


class ChunkChoice(BaseModel):
    index: int = 0
    delta: Delta
    finish_reason: ChatFinish | None = None
    logprobs: None = None


class ChatCompletionChunk(BaseModel):
    id: str
    object: Literal["chat.completion.chunk"] = "chat.completion.chunk"
    created: int
    model: str
    choices: list[ChunkChoice]
    usage: Usage | None = Field(default=None, exclude_if=_absent)


class Model(BaseModel):
    id: str
    object: Literal["model"] = "model"
    created: int
    owned_by: str = "dragoman"
    root: str = Field(
        description="vLLM's field: where the weights are. `vllm bench serve` reads it (and "
        "loads its tokenizer from there unless given --tokenizer)."
    )


class ModelList(BaseModel):
    object: Literal["list"] = "list"
    data: list[Model]


class ErrorDetail(BaseModel):
    message: str
    type: str
    param: str | None = None
    code: str


class ErrorResponse(BaseModel):
    """Every error of this surface (api/errors.py renders it): documented so that the schema
    does not promise FastAPI's 422 validation shape, which this surface never answers."""

    error: ErrorDetail
