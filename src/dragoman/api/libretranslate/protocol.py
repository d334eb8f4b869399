"""LibreTranslate's request and response shapes and language codes. Codes are lower-case ISO
639-1 with `zh-Hans` for Chinese; the legacy aliases (`zh`, `pb`, `pt-BR`) are read in any case.
Traditional Chinese (`zt`, `zh-Hant`) is not served."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field, ValidationError

from dragoman.api.errors import describe_errors
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


class LtTranslateRequest(BaseModel):
    q: str | list[str] = Field(description="A text, or a list of texts (JSON only).")
    source: str = Field(default="auto", description="Language code, or `auto` to detect.")
    target: str
    format: str = Field(
        default="text", description="`text`, or `html`: tags, attributes and code kept."
    )
    alternatives: int = Field(default=0, ge=0, description="Accepted; none are produced.")
    api_key: str | None = None


class LtDetectRequest(BaseModel):
    q: str | list[str] = Field(description="A text, or a list of texts (JSON only): one ranking.")
    api_key: str | None = None


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
