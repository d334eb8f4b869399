"""Lists merged over the healthy backends (LibreTranslate's /languages, DeepL's /v2/languages,
OpenAI's /v1/models): each backend lists only its own languages or models, and a client builds
its menus, checks its targets or picks its model from the one answer it gets, so one backend's
list hid the rest of the fleet."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import httpx
from fastapi.responses import JSONResponse, Response

from dragoman.metrics import RouterMetrics
from dragoman.router.backends import Backend, NoHealthyBackend, Pool
from dragoman.router.proxy import BackendUnreachable, Outgoing, relay, send

log = logging.getLogger(__name__)


async def gather_lists(
    client: httpx.AsyncClient, pool: Pool, out: Outgoing, metrics: RouterMetrics
) -> list[tuple[Backend, httpx.Response]]:
    """Every healthy backend's answer to `out` (a read); those that could not answer are left
    out (and accounted for as any request's failure)."""
    healthy = [b for b in pool.backends if b.healthy]
    if not healthy:
        raise NoHealthyBackend("no backend is healthy; retry later", pool.readmit_seconds)
    sent = await asyncio.gather(
        *(send(client, pool, b, out, metrics) for b in healthy), return_exceptions=True
    )
    answers = []
    for b, result in zip(healthy, sent, strict=True):
        if isinstance(result, BaseException):
            log.warning("backend %s did not answer %s (%r)", b.name, out.path, result)
            continue
        r, slot = result
        if not r.is_closed:  # a stream is no list: closed, its place given back
            await r.aclose()
            slot.release()
            continue
        answers.append((b, r))
    if not answers:
        raise BackendUnreachable("no backend could be reached")
    return answers


def merged(
    answers: list[tuple[Backend, httpx.Response]],
    key: str,
    nested: str | None = None,
    inside: str | None = None,
) -> Response:
    """The lists of the backends that answered 200, entries merged by `key` in the order
    first seen, each `nested` list the union of theirs; when none did, the first answer as
    it came (a 401, a 400 for a bad parameter). `inside`: the list is that field of an
    object (OpenAI's `{"object": "list", "data": [...]}`), whose other fields are the first
    answer's."""
    ok = [(b, r) for b, r in answers if r.status_code == 200]
    if not ok:
        return relay(*answers[0])
    entries: dict[Any, dict[str, Any]] = {}
    envelope: dict[str, Any] | None = None
    for b, r in ok:
        try:
            listed = r.json()
        except ValueError:
            listed = None
        if inside is not None and isinstance(listed, dict):
            envelope = listed if envelope is None else envelope
            listed = listed.get(inside)
        if not isinstance(listed, list):
            log.warning("backend %s answered no list", b.name)
            continue
        for entry in listed:
            if not isinstance(entry, dict) or key not in entry:
                continue
            seen = entries.setdefault(entry[key], dict(entry))
            more = entry.get(nested) if nested else None
            if nested and isinstance(more, list):
                kept = seen.get(nested)
                kept = kept if isinstance(kept, list) else []
                seen[nested] = [*kept, *(x for x in more if x not in kept)]
    names = ",".join(b.name for b, _ in ok)
    body: Any = list(entries.values())
    if inside is not None:
        body = {**(envelope or {}), inside: body}
    return JSONResponse(body, headers={"x-dragoman-backend": names})
