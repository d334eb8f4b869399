"""DeepL's v2 glossary endpoints over the server's glossary store (files or a Redis-protocol
server, which other servers may share; a key's glossaries are its own):
create (JSON or form; entries as TSV or CSV), list, get, entries (TSV), delete, and the
supported language pairs. A translation names one with `glossary_id` (with `source_lang`, as
DeepL requires)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request, Response
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from dragoman.api.deepl.protocol import (
    SOURCE_CODES,
    SPELLINGS,
    TARGET_CODES,
    DeepLError,
    from_deepl,
)
from dragoman.api.deepl.router import ANY_REQUEST, CallerDep
from dragoman.api.deps import TranslatorDep
from dragoman.api.errors import describe_errors
from dragoman.api.openapi import CSV_ENTRIES, NOT_BLANK, TSV_ENTRIES, differ, errors, one_of
from dragoman.api.params import body_schema, read_params
from dragoman.errors import InvalidRequest
from dragoman.service.glossary import (
    MAX_ENTRIES_CHARS,
    MAX_NAME_CHARS,
    Glossaries,
    Summary,
    parse_entries,
)

router = APIRouter(prefix="/v2", tags=["deepl"])

_STORE = {**ANY_REQUEST, 503: "The glossary store cannot be read or written right now"}
_ONE = errors(DeepLError, {**_STORE, 404: "No glossary by that id (or not this key's)"})


async def get_store(request: Request) -> Glossaries:
    store: Glossaries = request.app.state.glossaries
    return store


StoreDep = Annotated[Glossaries, Depends(get_store)]


def _entries_as_their_format(schema: dict[str, Any]) -> None:
    differ("source_lang", "target_lang", SPELLINGS)(schema)
    schema["if"] = {
        "properties": {"entries_format": {"const": "csv"}},
        "required": ["entries_format"],
    }
    schema["then"] = {"properties": {"entries": {"pattern": CSV_ENTRIES}}}
    schema["else"] = {"properties": {"entries": {"pattern": TSV_ENTRIES}}}


class CreateGlossary(BaseModel):
    model_config = ConfigDict(json_schema_extra=_entries_as_their_format)

    name: str = Field(
        description="Not blank.",
        json_schema_extra={"pattern": NOT_BLANK, "maxLength": MAX_NAME_CHARS},
    )
    source_lang: str = Field(json_schema_extra=one_of(SOURCE_CODES))
    target_lang: str = Field(json_schema_extra=one_of(TARGET_CODES))
    entries: str = Field(
        description="`source<TAB>target` lines (tsv), or CSV rows of two terms (csv); no "
        "source term twice; a term holds no control character and, without the white space "
        "around it, is 1 to 200 characters.",
        json_schema_extra={"maxLength": MAX_ENTRIES_CHARS},
    )
    entries_format: str = Field(default="tsv", json_schema_extra=one_of(["tsv", "csv"]))


class GlossaryInfo(BaseModel):
    glossary_id: str
    name: str
    ready: bool
    source_lang: str
    target_lang: str
    creation_time: str
    entry_count: int


class GlossaryList(BaseModel):
    glossaries: list[GlossaryInfo]


def info(g: Summary) -> GlossaryInfo:
    return GlossaryInfo(
        glossary_id=g.glossary_id,
        name=g.name,
        ready=True,
        source_lang=g.source_lang,
        target_lang=g.target_lang,
        creation_time=g.creation_time,
        entry_count=g.entry_count,
    )


@router.post(
    "/glossaries",
    status_code=201,
    response_model=GlossaryInfo,
    responses=errors(
        DeepLError,
        {
            **_STORE,
            400: "Bad parameters or entries, an unsupported pair, or the key's 100 glossaries "
            "stored already",
            503: "Engine not ready, or the glossary store failing",
        },
    ),
    openapi_extra=body_schema(CreateGlossary),
)
async def create(
    request: Request, caller: CallerDep, store: StoreDep, translator: TranslatorDep
) -> GlossaryInfo:
    try:
        req = CreateGlossary.model_validate(await read_params(request))
    except ValidationError as exc:
        raise InvalidRequest(describe_errors(list(exc.errors()))[1]) from None
    source = from_deepl(req.source_lang, "source_lang")
    target = from_deepl(req.target_lang, "target_lang")
    for code, field in ((source, "source_lang"), (target, "target_lang")):
        if code not in translator.languages:
            raise InvalidRequest(f"Value for '{field}' not supported.")
    if source == target:
        raise InvalidRequest("Unsupported glossary source and target language pair.")
    entries = parse_entries(req.entries, req.entries_format, source, target)
    return info((await store.create(req.name, source, target, entries, caller.key)).summary())


@router.get("/glossaries", response_model=GlossaryList, responses=errors(DeepLError, _STORE))
async def list_all(caller: CallerDep, store: StoreDep) -> GlossaryList:
    owned = await store.owned(caller.key)
    return GlossaryList(glossaries=[info(g) for g in owned])


@router.get("/glossaries/{glossary_id}", response_model=GlossaryInfo, responses=_ONE)
async def get(glossary_id: str, caller: CallerDep, store: StoreDep) -> GlossaryInfo:
    return info((await store.get(glossary_id, caller.key)).summary())


@router.get(
    "/glossaries/{glossary_id}/entries",
    response_class=Response,
    responses={
        **_ONE,
        200: {
            "description": "The entries, a `source<TAB>target` line each",
            "content": {"text/tab-separated-values": {"schema": {"type": "string"}}},
        },
    },
)
async def entries(glossary_id: str, caller: CallerDep, store: StoreDep) -> Response:
    g = await store.get(glossary_id, caller.key)
    tsv = "".join(f"{s}\t{t}\n" for s, t in g.entries)
    return Response(tsv, media_type="text/tab-separated-values")


@router.delete(
    "/glossaries/{glossary_id}", status_code=204, response_class=Response, responses=_ONE
)
async def delete(glossary_id: str, caller: CallerDep, store: StoreDep) -> Response:
    await store.delete(glossary_id, caller.key)
    return Response(status_code=204)


@router.get(
    "/glossary-language-pairs",
    responses=errors(DeepLError, {**ANY_REQUEST, 503: "Engine not ready"}),
)
async def pairs(caller: CallerDep, translator: TranslatorDep) -> dict[str, list[dict[str, str]]]:
    served = translator.languages
    return {
        "supported_languages": [
            {"source_lang": s, "target_lang": t} for s in served for t in served if s != t
        ]
    }
