"""LibreTranslate's request and response shapes and language codes. Codes are lower-case ISO
639-1 with `zh-Hans` for Chinese; the legacy aliases (`zh`, `pb`, `pt-BR`) are read in any case.
Traditional Chinese (`zt`, `zh-Hant`) is not served."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from dragoman.api.errors import describe_errors
from dragoman.api.openapi import differ, exactly, one_of
from dragoman.errors import InvalidRequest, UnsupportedLanguage
from dragoman.languages import NAMES

_IN = {"zh-hans": "zh", "pb": "pt", "pt-br": "pt"}
_OUT = {"zh": "zh-Hans"}


def from_lt(code: str) -> str | None:
    """Our code for a LibreTranslate one; None for `auto`."""
    lowered = code.strip().lower()
    if lowered == "auto":
        return None
    if not lowered:
        raise UnsupportedLanguage("an empty language code is not supported (auto detects)")
    ours = _IN.get(lowered, lowered)
    if ours not in NAMES:
        raise UnsupportedLanguage(f"{code} is not supported")
    return ours


def to_lt(code: str) -> str:
    return _OUT.get(code, code)


# The codes the document names: LibreTranslate's own spellings, the legacy aliases too (read in
# any case). A language the model does not serve is 400 "<code> is not supported".
CODES = [to_lt(c) for c in sorted(NAMES)] + ["zh", "pb", "pt-BR"]
_SPELLINGS = [[x for x in CODES if _IN.get(x.lower(), x.lower()) == c] for c in sorted(NAMES)]
# A text: `q` empty, or an empty list, is "missing" (400), as at LibreTranslate.
Q_TEXT = {"type": "string", "minLength": 1}
_Q = exactly(anyOf=[Q_TEXT, {"type": "array", "items": {"type": "string"}, "minItems": 1}])


ALTERNATIVES_LIMIT = 3
"""Most alternatives a request may ask for: LibreTranslate's own default (--alternatives-limit)."""


class LtTranslateRequest(BaseModel):
    model_config = ConfigDict(
        json_schema_extra=differ("source", "target", [(s, s) for s in _SPELLINGS])
    )

    q: str | list[str] = Field(
        description="A text, or a list of texts (JSON only).", json_schema_extra=_Q
    )
    source: str = Field(
        default="auto",
        description="Language code, or `auto` to detect.",
        json_schema_extra=one_of(["auto", *CODES]),
    )
    target: str = Field(description="Language code.", json_schema_extra=one_of(CODES))
    format: str = Field(
        default="text",
        description="`text`, or `html`: tags, attributes and code kept.",
        json_schema_extra=one_of(["text", "html"]),
    )
    alternatives: int = Field(
        default=0,
        ge=0,
        description="Runners-up to return beside `translatedText` (at most 3, as "
        "LibreTranslate's default limit), distinct, best first: fewer when the candidates "
        "agree. A number, or (as LibreTranslate reads it, and as a form sends it) a string of "
        "digits.",
        json_schema_extra=exactly(
            anyOf=[
                {"type": "integer", "minimum": 0, "maximum": ALTERNATIVES_LIMIT},
                {"type": "string", "pattern": f"^0*[0-{ALTERNATIVES_LIMIT}]$"},
            ]
        ),
    )
    api_key: str | None = Field(
        default=None, description="With keys on; empty or null: none (400 when one is needed)."
    )

    @field_validator("alternatives", mode="before")
    @classmethod
    def _a_number(cls, value: object) -> object:
        if isinstance(value, bool):  # true is no count
            raise ValueError("alternatives must be a number")
        return value


class LtDetectRequest(BaseModel):
    q: str | list[str] = Field(
        description="A text, or a list of texts (JSON only): one ranking.", json_schema_extra=_Q
    )
    api_key: str | None = None


class LtError(BaseModel):
    """Every error of LibreTranslate's endpoints, as LibreTranslate answers them."""

    error: str


class DetectedLanguage(BaseModel):
    confidence: float = Field(description="0-100.")
    language: str


class LtTranslateResponse(BaseModel):
    translatedText: str | list[str]
    detectedLanguage: DetectedLanguage | list[DetectedLanguage] | None = None
    alternatives: list[str] | list[list[str]] | None = None


class LtLanguage(BaseModel):
    code: str
    name: str
    targets: list[str]


def parse(model: type[BaseModel], params: dict[str, Any], required: tuple[str, ...]) -> Any:
    """`params` as `model`, with LibreTranslate's own messages for what is missing."""
    for name in required:
        value = params.get(name)
        if value is None or value == "" or value == []:
            raise InvalidRequest(f"Invalid request: missing {name} parameter")
    try:
        return model.model_validate(params)
    except ValidationError as exc:
        _, message = describe_errors(list(exc.errors()))
        raise InvalidRequest(f"Invalid request: {message}") from None
