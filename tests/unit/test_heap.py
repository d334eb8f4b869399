"""`settle`: the server process's heap frozen once at start-up, the collector's thresholds
raised, so that a huge request's full collections (each a pause of every thread) stop walking
its plan again and again. Counted, never timed."""

from __future__ import annotations

import gc
from pathlib import Path

import httpx

from dragoman.api.app import build_app
from dragoman.heap import THRESHOLDS, settle
from dragoman.service.settings import ServeSettings
from tests.fakes import FakeTranslator, factory_for
from tests.unit.api.conftest import engine_ready

BLOCK = (
    '<p>Click <a href="/settings" class="btn">the <b>Save</b> button</a> to keep your '
    "changes. {n} items were updated.</p><ul><li>First <i>item</i></li><li>Second item</li></ul>"
)


def page(size: int, salt: int) -> str:
    blocks: list[str] = []
    while sum(map(len, blocks)) < size:
        blocks.append(BLOCK.replace("{n}", f"{salt}-{len(blocks)}"))
    return "<div>" + "".join(blocks) + "</div>"


def test_settle_freezes_the_heap_once_and_raises_the_thresholds(restored_gc: None) -> None:
    settle()
    frozen = gc.get_freeze_count()
    assert frozen > 10_000  # the modules this process imported, at least
    assert len(gc.get_objects()) < frozen  # what is left to scan is what came after
    assert gc.get_threshold() == THRESHOLDS
    kept = [[i] for i in range(1000)]  # alive now, as a request's objects would be
    settle()
    # A second call freezes nothing more (`kept` would add 1,000): the count may only fall, as
    # frozen objects still die by reference count (CI saw 8 fewer between the two calls).
    assert gc.get_freeze_count() <= frozen
    assert kept


async def test_a_huge_request_on_a_settled_server_makes_no_full_collection(
    tmp_path: Path, restored_gc: None
) -> None:
    """16 HTML pages of 60 KB: their plan (~100,000 objects) stays alive while the units'
    objects churn. At Python's default thresholds full collections walked it over and over
    (64 pages: 15 of them, up to 0.19 s each); on the server's settled heap none falls inside
    the request."""
    settings = ServeSettings(data_dir=tmp_path, cache_mib=0)
    app = build_app(settings, factory_for(FakeTranslator()), after_ready=settle)
    body = {
        "text": [page(60_000, i) for i in range(16)],
        "source_lang": "en",
        "target_lang": "fr",
        "format": "html",
    }
    full: list[int] = []

    def counted(phase: str, info: dict[str, int]) -> None:
        if phase == "stop" and info["generation"] == 2:
            full.append(info["collected"])

    async with app.router.lifespan_context(app):
        await engine_ready(app)
        assert gc.get_freeze_count() > 0
        # As in a server that has run a while: CPython (3.11) waits, for its first full
        # collection after the freeze, for a quarter of the frozen heap's size to survive.
        gc.collect()
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
            gc.callbacks.append(counted)
            try:
                r = await client.post("/v1/translate", json=body, timeout=300)
            finally:
                gc.callbacks.remove(counted)
    assert r.status_code == 200, r.text
    assert len(r.json()["translations"]) == 16
    assert full == []
