"""Active health checks: every backend's /ready on an interval, with failure and recovery
thresholds; a backend that passes also has its language pairs learned from /v1/languages."""

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
        if ok and b.learn_pairs and not b.pairs:
            langs = (await client.get(f"{b.url}/v1/languages")).json()
            b.pairs = _pairs_of(langs)
    except (httpx.HTTPError, ValueError, KeyError):
        ok = False
    if ok:
        if pool.record_success(b, from_check=True):
            log.warning("backend %s is healthy: admitted", b.name)
    elif pool.record_failure(b):
        log.warning("backend %s failed %d checks: ejected", b.name, pool.fail_threshold)
    metrics.healthy.labels(b.name).set(1 if b.healthy else 0)


def _pairs_of(languages: dict[str, object]) -> set[tuple[str, str]]:
    """A backend lists explicit `pairs` (multi-model servers) or `languages` (any to any)."""
    pairs = languages.get("pairs")
    if isinstance(pairs, list):
        return {(p["source"], p["target"]) for p in pairs}
    langs = languages.get("languages", [])
    assert isinstance(langs, list)
    return pairs_from_languages([lang["code"] for lang in langs])


async def run_checks(
    client: httpx.AsyncClient, pool: Pool, metrics: RouterMetrics, interval: float
) -> None:
    while True:
        await asyncio.gather(*(check_once(client, pool, b, metrics) for b in pool.backends))
        await asyncio.sleep(interval)
