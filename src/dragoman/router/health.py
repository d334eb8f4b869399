"""Active health checks: every backend's /ready on an interval, with failure and recovery
thresholds. A backend's language pairs are learned from its /v1/languages on each passing
check until it is admitted, so one restarted with other languages is learned again when it
comes back. A backend answering anything unexpected fails its own check, never the loop."""

from __future__ import annotations

import asyncio
import logging

import httpx

from dragoman.languages import pairs_from_languages
from dragoman.metrics import RouterMetrics
from dragoman.router.backends import Backend, Pool

log = logging.getLogger(__name__)


async def check_once(
    client: httpx.AsyncClient, pool: Pool, b: Backend, metrics: RouterMetrics
) -> None:
    try:
        r = await client.get(f"{b.url}/ready")
        ok = r.status_code == 200
        if ok:
            b.glossary_store = _glossary_store(r)
        if ok and b.learn_pairs and not b.healthy:
            langs = (await client.get(f"{b.url}/v1/languages")).raise_for_status().json()
            b.pairs = _pairs_of(langs)
    except httpx.HTTPError:
        ok = False
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        log.warning("backend %s: its /v1/languages cannot be read (%r)", b.name, exc)
        ok = False
    if ok:
        if pool.record_success(b, from_check=True):
            log.warning("backend %s is healthy: admitted", b.name)
    elif pool.record_failure(b):
        log.warning("backend %s failed %d checks: ejected", b.name, pool.fail_threshold)
    metrics.healthy.labels(b.name).set(1 if b.healthy else 0)


def _glossary_store(ready: httpx.Response) -> str | None:
    """The glossary store a backend's /ready names (None: its own memory, or unknown)."""
    try:
        store = ready.json().get("glossary_store")
    except (ValueError, AttributeError):
        return None
    return store if isinstance(store, str) else None


def _pairs_of(languages: object) -> set[tuple[str, str]]:
    """A backend lists explicit `pairs` (multi-model servers) or `languages` (any to any).
    Anything else raises ValueError."""
    if not isinstance(languages, dict):
        raise ValueError("not a JSON object")
    pairs = languages.get("pairs")
    if isinstance(pairs, list):
        found = {(p["source"], p["target"]) for p in pairs}
    else:
        langs = languages.get("languages")
        if not isinstance(langs, list):
            raise ValueError("neither `pairs` nor `languages` is a list")
        found = pairs_from_languages([lang["code"] for lang in langs])
    if not all(isinstance(s, str) and isinstance(t, str) for s, t in found):
        raise ValueError("a language code is not a string")
    return found


async def run_checks(
    client: httpx.AsyncClient, pool: Pool, metrics: RouterMetrics, interval: float
) -> None:
    while True:
        results = await asyncio.gather(
            *(check_once(client, pool, b, metrics) for b in pool.backends),
            return_exceptions=True,
        )
        for b, result in zip(pool.backends, results, strict=True):
            if isinstance(result, Exception):  # a bug of ours: logged, the loop goes on
                log.error("checking backend %s failed: %r", b.name, result)
        await asyncio.sleep(interval)
