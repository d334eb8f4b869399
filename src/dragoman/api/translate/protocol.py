"""Request and response models of the translation API."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator
from pydantic_core import PydanticCustomError

from dragoman.api.openapi import NOT_BLANK, SPLIT, TERM, differ, exactly, one_of
from dragoman.engine.protocol import ContextMode, FinishReason, Quality
from dragoman.languages import NAMES
from dragoman.service.glossary import MAX_ENTRIES
from dragoman.service.settings import MAX_CANDIDATES

CODES = sorted(NAMES)
# What the document promises (the handler reads more spellings: any case, spaces around): a
# text with something besides white space, or a list of at least one such.
_TEXT = {"type": "string", "pattern": NOT_BLANK}
_TEXTS = exactly(anyOf=[_TEXT, {"type": "array", "items": _TEXT, "minItems": 1}])
_TERM = {"type": "string", "pattern": f"^{TERM}$"}
_GLOSSARY = exactly(
    anyOf=[
        {
            "type": "object",
            "propertyNames": _TERM,
            "additionalProperties": _TERM,
            "maxProperties": MAX_ENTRIES,
        },
        {"type": "null"},
    ]
)


class TranslateRequest(BaseModel):
    model_config = ConfigDict(
        json_schema_extra=differ("source_lang", "target_lang", [([c], [c]) for c in CODES])
    )

    text: str | list[str] = Field(
        description="One text, or a list of texts translated concurrently (order is kept); "
        "none empty or blank.",
        examples=["Thank you very much for your help."],
        json_schema_extra=_TEXTS,
    )
    source_lang: str = Field(
        description="ISO 639-1 code of the text's language, or `auto`: each text's is detected "
        "on its own (`detected_source_lang` in each translation). A language the model does "
        "not serve (GET /v1/languages), or the target's, is 400 unsupported_language.",
        examples=["en"],
        json_schema_extra=one_of(["auto", *CODES]),
    )
    target_lang: str = Field(
        description="ISO 639-1 code to translate into.",
        examples=["fr"],
        json_schema_extra=one_of(CODES),
    )
    split_sentences: Literal["0", "1", "nonewlines"] = Field(
        default="1",
        description="Texts longer than --min-split-chars, or with newlines, are translated "
        "sentence by sentence, concurrently, the layout kept: 1 at sentence ends and newlines, "
        "nonewlines at sentence ends only, 0 not at sentences (a piece over --max-unit-chars "
        "is still cut). As DeepL's clients send it, the numbers 0 and 1 and null are read too.",
        json_schema_extra=SPLIT,
    )
    format: Literal["text", "html", "xml"] = Field(
        default="text",
        description="html or xml: tags, attributes, entities and the structure are kept, the "
        'text between them translated; code, pre, script, style and translate="no" are '
        "left alone; malformed XML is 422.",
    )
    glossary: dict[str, str] | None = Field(
        default=None,
        description='Terms to translate so: {"source term": "target term"}. Each sentence '
        "holding a term is sent with it; `glossary_missed` says which the model did not use. "
        "A term holds no control character or line break and, without the white space "
        "around it, is 1 to 200 characters.",
        examples=[{"save": "enregistrer"}],
        json_schema_extra=_GLOSSARY,
    )
    context: ContextMode | None = Field(
        default=None,
        description="When a text is translated sentence by sentence: previous shows each "
        "sentence's prompt the sentence before it as context (not translated), both also the "
        "one after, off none; absent, the server's --sentence-context.",
    )
    quality: Quality | None = Field(
        default=None,
        description="Where the server hosts two models for the pair (quality tiers): fast "
        "or best picks one; absent, the pair's default. A tier the server does not have for "
        "the pair falls back to the model that serves it; `model` says which translated.",
    )
    candidates: int | None = Field(
        default=None,
        ge=1,
        le=MAX_CANDIDATES,
        description="Candidates made for each sentence: the greedy reply and the rest "
        "sampled, each checked, the one the others agree with most kept (1: the greedy reply "
        "alone); absent, the server's --candidates.",
    )
    alternatives: int = Field(
        default=0,
        ge=0,
        le=MAX_CANDIDATES - 1,
        description="Runners-up to return with each translation (`alternatives`), distinct, "
        "best first; as many candidates are made as it takes (at least this many and one). "
        "Fewer come back when candidates agree.",
    )
    timeout: float | None = Field(
        default=None,
        gt=0,
        description="Seconds this request may take (as the X-Request-Timeout header; the "
        "shorter wins, and the server's --request-timeout caps both). Past it the texts are "
        "aborted and the answer is 504 deadline_exceeded.",
    )

    @field_validator("text")
    @classmethod
    def _not_empty(cls, value: str | list[str]) -> str | list[str]:
        items = [value] if isinstance(value, str) else value
        if not items:
            raise PydanticCustomError("empty_text", "text must not be an empty list")
        for i, item in enumerate(items):
            if not item.strip():
                where = "text" if isinstance(value, str) else f"text[{i}]"
                raise PydanticCustomError(
                    "empty_text", "{where} must not be empty", {"where": where}
                )
        return value

    @field_validator("split_sentences", mode="before")
    @classmethod
    def _split_as_deepl(cls, value: object) -> object:
        """As DeepL's clients send it too: a number (0, 1) or null (the default)."""
        if value is None:
            return "1"
        return str(value) if isinstance(value, int) and not isinstance(value, bool) else value

    @field_validator("timeout", mode="before")
    @classmethod
    def _a_number(cls, value: object) -> object:
        """A number, as the document says: not a string holding one, nor a boolean."""
        if isinstance(value, str):
            try:
                float(value)
            except ValueError:
                raise PydanticCustomError(
                    "float_parsing",
                    "Input should be a valid number, unable to parse string as a number",
                ) from None
            raise PydanticCustomError("float_type", "Input should be a valid number, not a string")
        if isinstance(value, bool):
            raise PydanticCustomError("float_type", "Input should be a valid number")
        return value

    @field_validator("candidates", "alternatives", mode="before")
    @classmethod
    def _a_count(cls, value: object) -> object:
        """A JSON number (5.0 is 5, as JSON Schema's integer), not a string or a boolean."""
        if isinstance(value, str | bool):
            raise PydanticCustomError("int_type", "Input should be a valid integer")
        return value

    @field_validator("source_lang", "target_lang")
    @classmethod
    def _normalise(cls, value: str) -> str:
        return value.strip().lower()

    @property
    def texts(self) -> list[str]:
        return [self.text] if isinstance(self.text, str) else list(self.text)


class TranslationItem(BaseModel):
    text: str
    finish_reason: FinishReason = Field(
        description="stop: the model finished; length: hit the output budget; repetition: "
        "stopped by the guard against degenerate repetition (the repeated tail is cut); "
        "unchanged: no letters to translate (numbers, emoji, URLs), returned as it is. For a "
        "text translated sentence by sentence, the worst of its sentences'."
    )
    input_tokens: int
    output_tokens: int
    queue_seconds: float
    inference_seconds: float
    detected_source_lang: str | None = Field(
        default=None,
        description="With source_lang auto: the language detected for this text (absent when "
        "it has no letters).",
    )
    glossary_missed: list[str] | None = Field(
        default=None, description="With a glossary: its source terms the translation lacks."
    )
    alternatives: list[str] | None = Field(
        default=None,
        description="With `alternatives` asked: the runners-up of this text's translation, "
        "best first (fewer than asked when the candidates agree; empty for a text that needed "
        "no engine).",
    )
    model: str | None = Field(
        default=None,
        description="The model that translated this text (absent when it needed none, as an "
        "unchanged text). A list's texts may go to different models; the answer's `model` is "
        "its first translated text's.",
    )


class Usage(BaseModel):
    input_tokens: int
    output_tokens: int


class Timing(BaseModel):
    queue_seconds: float = Field(description="Longest engine queue wait among the texts.")
    inference_seconds: float = Field(description="Longest engine compute time among the texts.")
    total_seconds: float = Field(description="Server time for the whole request.")


class TranslateResponse(BaseModel):
    translations: list[TranslationItem]
    model: str = Field(
        description="The model of the first translated text (each translation names its own)."
    )
    source_lang: str
    target_lang: str
    usage: Usage
    timing: Timing


class Language(BaseModel):
    code: str
    name: str


class PairInfo(BaseModel):
    source: str
    target: str
    model: str
    tiers: dict[Quality, str] | None = Field(
        default=None,
        description="Where two models serve the pair: each quality tier's model (`model` is "
        "the one a request without a hint gets).",
    )


class LanguagesResponse(BaseModel):
    model: str
    languages: list[Language]
    pairs: list[PairInfo] | None = Field(
        default=None,
        description="On a multi-model server: every pair served, and by which model. "
        "Otherwise any two of `languages` make a pair.",
    )


class NativeErrorDetail(BaseModel):
    code: str = Field(description="What went wrong, for a program: `unsupported_language`, ...")
    message: str


class NativeError(BaseModel):
    """Every error of the native API and the system endpoints (api/errors.py renders it)."""

    error: NativeErrorDetail
