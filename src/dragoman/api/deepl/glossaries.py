"""DeepL's v2 glossary endpoints over the server's glossary store (files or a Redis-protocol
server, which other servers may share; a key's glossaries are its own):
create (JSON or form; entries as TSV or CSV), list, get, entries (TSV), delete, and the
supported language pairs. A translation names one with `glossary_id` (with `source_lang`, as
DeepL requires)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Request, Response
from pydantic import BaseModel, ValidationError

from dragoman.api.deepl.protocol import from_deepl
from dragoman.api.deepl.router import CallerDep
from dragoman.api.deps import TranslatorDep
from dragoman.api.errors import describe_errors
from dragoman.api.params import body_schema, read_params
from dragoman.errors import InvalidRequest
from dragoman.service.glossary import Glossaries, Summary, parse_entries

router = APIRouter(prefix="/v2", tags=["deepl"])


async def get_store(request: Request) -> Glossaries:
    store: Glossaries = request.app.state.glossaries
    return store


StoreDep = Annotated[Glossaries, Depends(get_store)]


class CreateGlossary(BaseModel):
    name: str
    source_lang: str
    target_lang: str
    entries: str
    entries_format: str = "tsv"


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


@router.get("/glossaries", response_model=GlossaryList)
async def list_all(caller: CallerDep, store: StoreDep) -> GlossaryList:
    owned = await store.owned(caller.key)
    return GlossaryList(glossaries=[info(g) for g in owned])


@router.get("/glossaries/{glossary_id}", response_model=GlossaryInfo)
async def get(glossary_id: str, caller: CallerDep, store: StoreDep) -> GlossaryInfo:
    return info((await store.get(glossary_id, caller.key)).summary())


@router.get("/glossaries/{glossary_id}/entries")
async def entries(glossary_id: str, caller: CallerDep, store: StoreDep) -> Response:
    g = await store.get(glossary_id, caller.key)
    tsv = "".join(f"{s}\t{t}\n" for s, t in g.entries)
    return Response(tsv, media_type="text/tab-separated-values")


@router.delete("/glossaries/{glossary_id}", status_code=204)
async def delete(glossary_id: str, caller: CallerDep, store: StoreDep) -> Response:
    await store.delete(glossary_id, caller.key)
    return Response(status_code=204)


@router.get("/glossary-language-pairs")
async def pairs(caller: CallerDep, translator: TranslatorDep) -> dict[str, list[dict[str, str]]]:
    served = translator.languages
    return {
        "supported_languages": [
            {"source_lang": s, "target_lang": t} for s in served for t in served if s != t
        ]
    }
