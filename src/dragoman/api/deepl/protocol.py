"""DeepL's request and response shapes, language codes and option policy.

Codes are upper case and read in any case. Targets list the regional variants the `deepl`
client insists on (EN-GB, EN-US, PT-BR, PT-PT, ZH-HANS): each is served by the one model
language (en, pt, zh). As at DeepL, a variant is no source: `source_lang=EN-GB` is 400 "Value
for 'source_lang' not supported.". Traditional Chinese (ZH-HANT) is not served.

Options the model cannot honour, decided one by one:
- honoured: `split_sentences` ("1" sentences and newlines, the default; "nonewlines", the
  default with tag_handling=html; "0" not at sentences; a piece over --max-unit-chars is still cut),
  `tag_handling` (html, xml: tags kept, text between them translated; malformed XML is 400
  "Tag handling parsing failed"), `ignore_tags` (a list, or comma separated in a form);
- honoured: `model_type`, as the quality hint where the server hosts tiers:
  `latency_optimized` the fast tier, `quality_optimized` and `prefer_quality_optimized` the best
  tier. Both fall back to the pair's default where it has no best tier (DeepL refuses
  `quality_optimized` there; here the text is served and `model_type_used`, in each
  translation, says which tier translated); another value is 400;
- accepted and ignored (they change nothing the model does, or DeepL itself ignores them where
  unsupported): `context`, `preserve_formatting`, `show_billed_characters`,
  `outline_detection`, `tag_handling_version`, `formality` = default | prefer_more |
  prefer_less, and unknown keys (`extra_body_parameters`);
- honoured: `glossary_id` (or `glossary_ids`: their entries merged), with `source_lang`, as
  DeepL requires, and the glossary's pair;
- refused with 400: `formality` = more | less (as DeepL does for a target without formality;
  /v2/languages says supports_formality false), `custom_instructions`, `style_id`,
  `translation_memory_id`; `non_splitting_tags`, `splitting_tags` and `outline_detection` are
  accepted and ignored.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from dragoman.api.errors import describe_errors
from dragoman.api.openapi import SPLIT, differ, exactly, one_of
from dragoman.engine.protocol import Quality
from dragoman.errors import InvalidRequest, UnsupportedLanguage
from dragoman.languages import NAMES
from dragoman.service.documents import TextOptions

_VARIANTS = {"en": ("EN-GB", "EN-US"), "pt": ("PT-BR", "PT-PT"), "zh": ("ZH", "ZH-HANS")}
_VARIANT_NAMES = {
    "EN-GB": "English (British)",
    "EN-US": "English (American)",
    "PT-BR": "Portuguese (Brazilian)",
    "PT-PT": "Portuguese (European)",
    "ZH-HANS": "Chinese (simplified)",
}
_IN = {v.lower(): ours for ours, variants in _VARIANTS.items() for v in variants} | {"es-419": "es"}
# DeepL's sources are languages ("EN: all English variants"): a variant is a target only, and
# as source_lang DeepL answers 400 "Value for 'source_lang' not supported.".
_TARGET_ONLY = {code for code, ours in _IN.items() if code != ours}
_REFUSED = {
    "custom_instructions": "custom_instructions are not supported by this server",
    "style_id": "style rules are not supported by this server",
    "translation_memory_id": "translation memories are not supported by this server",
}
_FORMALITY_IGNORED = {"default", "prefer_more", "prefer_less"}
# As DeepL's client allows; each named once (a glossary named twice is used once).
MAX_GLOSSARIES_A_REQUEST = 5
ModelType = Literal["latency_optimized", "quality_optimized", "prefer_quality_optimized"]
_QUALITY: dict[str, Quality] = {
    "latency_optimized": "fast",
    "quality_optimized": "best",
    "prefer_quality_optimized": "best",
}


def from_deepl(code: str, field: str) -> str:
    """Our language for DeepL's `code` in `field` (a regional variant only as a target)."""
    lowered = code.strip().lower()
    ours = _IN.get(lowered, lowered)
    if ours not in NAMES or (field == "source_lang" and lowered in _TARGET_ONLY):
        raise UnsupportedLanguage(f"Value for '{field}' not supported.")
    return ours


def to_deepl(code: str) -> str:
    return code.upper()


def _both_cases(codes: list[str]) -> list[str]:
    return [*codes, *(c.lower() for c in codes)]


# The codes the document names, in DeepL's upper case and the lower case Mastodon sends (read in
# any case); a language the model does not serve is 400 "Value for '...' not supported.".
SOURCE_CODES = _both_cases([to_deepl(c) for c in sorted(NAMES)])
TARGET_CODES = _both_cases(sorted({to_deepl(c) for c in NAMES} | {v.upper() for v in _IN}))
_OPTIONAL = {"type": "null"}


def _ours(code: str) -> str:
    return _IN.get(code.lower(), code.lower())


# Each language's source and target spellings: a pair of one language is refused.
SPELLINGS = [
    ([x for x in SOURCE_CODES if _ours(x) == c], [x for x in TARGET_CODES if _ours(x) == c])
    for c in sorted(NAMES)
]
# What no tag name holds: a character XML forbids, or a brace (lxml reads `{uri}name`).
_NO_TAG_CHARS = r"{}\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff"
_NO_TAG = re.compile(f"[{_NO_TAG_CHARS}\ud800-\udfff]")
_TAGS = {"type": "string", "pattern": f"^[^{_NO_TAG_CHARS}]*$"}
# A form's `text` fields: each one text, an empty one too (a JSON `text` of "" is none).
FORM_TEXT = {
    "anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}, "minItems": 1}]
}
# Refused unless empty: what the server cannot do (see the module doc).
_ONLY_EMPTY = exactly(
    anyOf=[_OPTIONAL, {"type": "string", "maxLength": 0}, {"type": "array", "maxItems": 0}]
)


def target_codes(code: str) -> list[tuple[str, str]]:
    """(DeepL target code, name) for one of our languages."""
    variants = _VARIANTS.get(code)
    if variants is None:
        return [(code.upper(), NAMES[code])]
    return [(v, _VARIANT_NAMES.get(v, NAMES[code])) for v in variants]


# A glossary needs the source language, as at DeepL (an empty glossary_id names none); at most
# MAX_GLOSSARIES_A_REQUEST glossaries in all (the deepl client's bound).
_NAMES_A_GLOSSARY = {"properties": {"glossary_id": {"minLength": 1}}, "required": ["glossary_id"]}
_GLOSSARY_RULES = [
    {
        "if": {
            "anyOf": [
                _NAMES_A_GLOSSARY,
                {"properties": {"glossary_ids": {"minItems": 1}}, "required": ["glossary_ids"]},
            ]
        },
        "then": {"properties": {"source_lang": {"type": "string"}}, "required": ["source_lang"]},
    },
    {
        "if": _NAMES_A_GLOSSARY,
        "then": {"properties": {"glossary_ids": {"maxItems": MAX_GLOSSARIES_A_REQUEST - 1}}},
    },
]


def _translate_schema(schema: dict[str, Any]) -> None:
    differ("source_lang", "target_lang", SPELLINGS)(schema)
    schema["allOf"] = _GLOSSARY_RULES


class DeepLTranslateRequest(BaseModel):
    model_config = ConfigDict(extra="allow", json_schema_extra=_translate_schema)

    text: list[str] = Field(
        description="Texts to translate (form: repeated `text` fields); one text is read too.",
        json_schema_extra=exactly(
            anyOf=[
                {"type": "string", "minLength": 1},
                {"type": "array", "items": {"type": "string"}, "minItems": 1},
            ]
        ),
    )
    target_lang: str = Field(json_schema_extra=one_of(TARGET_CODES))
    source_lang: str | None = Field(
        default=None,
        description="Omit to detect each text's.",
        json_schema_extra=exactly(anyOf=[{"type": "string", "enum": SOURCE_CODES}, _OPTIONAL]),
    )
    formality: str | None = Field(
        default=None,
        description="Accepted, no effect: default, prefer_more, prefer_less (any case); more "
        "and less are 400 (no target here supports formality).",
        json_schema_extra=exactly(
            anyOf=[
                {"type": "string", "enum": sorted(_FORMALITY_IGNORED)},
                _OPTIONAL,
            ]
        ),
    )
    context: str | None = Field(default=None, description="Accepted; not used.")
    split_sentences: Literal["0", "1", "nonewlines"] | None = Field(
        default=None,
        description="1: sentences and newlines (default); nonewlines (default with html); 0.",
        json_schema_extra=SPLIT,
    )
    tag_handling: Literal["html", "xml"] | None = Field(
        default=None,
        description="html or xml; empty: none.",
        json_schema_extra=exactly(
            anyOf=[{"type": "string", "enum": ["html", "xml", ""]}, _OPTIONAL]
        ),
    )
    model_type: ModelType | None = Field(
        default=None,
        description="latency_optimized: the fast tier; the others the best; empty: none.",
        json_schema_extra=exactly(anyOf=[{"type": "string", "enum": [*_QUALITY, ""]}, _OPTIONAL]),
    )
    glossary_id: str | None = Field(
        default=None, description="A glossary of the pair (needs source_lang); empty: none."
    )
    glossary_ids: list[str] = Field(
        default_factory=list,
        json_schema_extra={"maxItems": MAX_GLOSSARIES_A_REQUEST},
        description="Up to 5 glossaries of the pair (with glossary_id: 5 in all), their "
        "entries merged (needs source_lang).",
    )
    ignore_tags: list[str] = Field(
        default_factory=list,
        description="Tags whose content is not translated: a list, or comma separated.",
        json_schema_extra=exactly(anyOf=[_TAGS, {"type": "array", "items": _TAGS}]),
    )
    custom_instructions: Any = Field(
        default=None, description="Refused unless empty.", json_schema_extra=_ONLY_EMPTY
    )
    style_id: Any = Field(
        default=None, description="Refused unless empty.", json_schema_extra=_ONLY_EMPTY
    )
    translation_memory_id: Any = Field(
        default=None, description="Refused unless empty.", json_schema_extra=_ONLY_EMPTY
    )

    @field_validator("ignore_tags", mode="before")
    @classmethod
    def _tags(cls, value: object) -> object:
        items = [value] if isinstance(value, str) else value
        if not isinstance(items, list):
            return value  # pydantic says what is wrong
        if not all(isinstance(item, str) for item in items):
            return value  # pydantic says what is wrong
        bad = next((item for item in items if _NO_TAG.search(item)), None)
        if bad is not None:
            raise ValueError(f"{bad!r} holds a character no tag name has")
        return [t.strip() for item in items for t in item.split(",") if t.strip()]

    @field_validator("tag_handling", "model_type", mode="before")
    @classmethod
    def _handling(cls, value: object) -> object:
        return None if value == "" else value

    @property
    def quality(self) -> Quality | None:
        return None if self.model_type is None else _QUALITY[self.model_type]

    @field_validator("split_sentences", mode="before")
    @classmethod
    def _split_text(cls, value: object) -> object:
        return str(value).lower() if isinstance(value, int | bool) else value

    @field_validator("text", mode="before")
    @classmethod
    def _listed(cls, value: object) -> object:
        return [value] if isinstance(value, str) else value


class DeepLTranslation(BaseModel):
    detected_source_language: str
    text: str
    billed_characters: int
    model_type_used: ModelType | None = Field(
        default=None, description="With model_type: the tier that translated."
    )


def model_type_used(quality: Quality | None) -> ModelType:
    return "quality_optimized" if quality == "best" else "latency_optimized"


class DeepLTranslateResponse(BaseModel):
    translations: list[DeepLTranslation]


class DeepLLanguage(BaseModel):
    language: str
    name: str
    supports_formality: bool | None = None


class DeepLUsage(BaseModel):
    character_count: int
    character_limit: int


class DeepLLanguagesRequest(BaseModel):
    type: Literal["source", "target"] = Field(
        default="source", description="Source languages, or targets (any case)."
    )


class DeepLError(BaseModel):
    """Every error of DeepL's endpoints, as DeepL answers them."""

    message: str


def parse_translate(params: dict[str, Any]) -> DeepLTranslateRequest:
    for name in ("text", "target_lang"):
        if params.get(name) in (None, "", []):
            raise InvalidRequest(f"Parameter '{name}' not specified.")
    for name, why in _REFUSED.items():
        if params.get(name) not in (None, "", []):
            raise InvalidRequest(why)
    try:
        req = DeepLTranslateRequest.model_validate(params)
    except ValidationError as exc:
        raise InvalidRequest(describe_errors(list(exc.errors()))[1]) from None
    if req.formality is not None and req.formality.lower() not in _FORMALITY_IGNORED:
        raise InvalidRequest(
            f"formality '{req.formality}' is not supported for this target language; use "
            "prefer_more or prefer_less (accepted, no effect)"
        )
    return req


def options_of(req: DeepLTranslateRequest) -> TextOptions:
    split = req.split_sentences or ("nonewlines" if req.tag_handling == "html" else "1")
    return TextOptions(split=split, markup=req.tag_handling, ignore_tags=tuple(req.ignore_tags))
