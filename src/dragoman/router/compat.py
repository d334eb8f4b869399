"""What the proxy needs to know of the compatible surfaces' requests: the language pair of a
translation (read from wherever the client put its parameters, in the surface's own codes), so
it goes to a backend that serves it. A detected source leaves that side open; anything that is
not a translation (detection, language lists, usage, chat, model lists, stored glossaries where
the backends share them) may go to any backend."""

from __future__ import annotations

from fastapi import Request

from dragoman.api.deepl.protocol import from_deepl
from dragoman.api.libretranslate.protocol import from_lt
from dragoman.api.params import read_params
from dragoman.router.backends import ANY, Want

# Paths proxied as they are (method, path): each surface's reads and chat. The lists
# (/languages, /v2/languages, /v1/models) are merged over the backends instead
# (router/gather.py). A model or a chat naming a model one backend lacks (404
# model_not_found) is passed over to the next (router/proxy.py).
PASSED = (
    (("POST",), "/detect"),
    (("GET",), "/frontend/settings"),
    (("GET", "POST"), "/v2/usage"),
    (("GET",), "/v2/glossary-language-pairs"),
    (("GET",), "/v1/models/{model_id:path}"),
    (("POST",), "/v1/chat/completions"),
)

# DeepL's stored glossaries: proxied only when every backend shares them (Pool.glossary_store).
GLOSSARIES = (
    (("GET", "POST"), "/v2/glossaries"),
    (("GET", "DELETE"), "/v2/glossaries/{glossary_id}"),
    (("GET",), "/v2/glossaries/{glossary_id}/entries"),
)


# Document jobs: the upload is routed by its pair; a job lives on the backend that took it, so
# its status, result and deletion go to each backend in turn until one knows the id (a
# backend that does not answers 404 `document_not_found`: router/proxy.py tries the next).
DOCUMENTS = (
    (("POST",), "/v2/document/{document_id}"),
    (("POST",), "/v2/document/{document_id}/result"),
    (("GET",), "/download_file/{name}"),
    (("GET", "DELETE"), "/v1/documents/{document_id}"),
    (("GET",), "/v1/documents/{document_id}/result"),
)


async def native_document_want(request: Request) -> Want:
    params = await read_params(request)
    source, target = params.get("source_lang", "auto"), params.get("target_lang")
    if not isinstance(source, str) or not isinstance(target, str):
        return ANY
    return (None if source == "auto" else source), target


async def libretranslate_want(request: Request) -> Want:
    params = await read_params(request)
    source, target = params.get("source", "auto"), params.get("target")
    if not isinstance(source, str) or not isinstance(target, str):
        return ANY  # the backend answers the malformed request in LibreTranslate's shape
    return from_lt(source), from_lt(target)


async def deepl_want(request: Request) -> Want:
    params = await read_params(request, multi=frozenset({"text"}))
    source, target = params.get("source_lang"), params.get("target_lang")
    if not isinstance(target, str) or not (source is None or isinstance(source, str)):
        return ANY
    return (None if source is None else from_deepl(source, "source_lang")), from_deepl(
        target, "target_lang"
    )
