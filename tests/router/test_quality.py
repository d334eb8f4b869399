"""The `quality` hint through the real `dragoman route`: the proxy forwards the body as sent, so
a backend hosting two tiers (echo engines under the entries' names) picks the model; a bad
value is refused by the proxy in the surface's shape, before any backend."""

from __future__ import annotations

from pathlib import Path

import httpx

from dragoman.bench.servers import Launched, launch_echo
from tests.router.test_routing import start

TIERS = """
[[models]]
name = "small"
model = "qwen2.5-coder-0.5b-instruct"
languages = ["en", "fr"]

[[models]]
name = "large"
model = "qwen2.5-coder-1.5b-instruct"
languages = ["en", "fr"]
"""


async def test_the_hint_reaches_the_backend_untouched(logs: Path, stop_all: list[Launched]) -> None:
    config = logs / "tiers.toml"
    config.write_text(TIERS)
    backend = launch_echo(logs, "", "--config", str(config))
    stop_all.append(backend)
    router = start(logs, stop_all, backend)
    async with httpx.AsyncClient(base_url=router.url, timeout=60) as c:
        body = {"text": "Good morning", "source_lang": "en", "target_lang": "fr"}
        for quality, model in (("best", "large"), ("fast", "small"), (None, "small")):
            hinted = body if quality is None else {**body, "quality": quality}
            r = await c.post("/v1/translate", json=hinted)
            assert r.status_code == 200, r.text
            assert r.json()["model"] == model
        deepl = {"text": ["Hi"], "source_lang": "EN", "target_lang": "FR"}
        r = await c.post(
            "/v2/translate",
            json={**deepl, "model_type": "quality_optimized"},
            headers={"authorization": "DeepL-Auth-Key k"},
        )
        assert r.json()["translations"][0]["model_type_used"] == "quality_optimized"
        r = await c.post("/v1/translate", json={**body, "quality": "medium"})
        assert r.status_code == 422
        assert r.json()["error"]["message"] == "quality: Input should be 'fast' or 'best'"
        assert "x-dragoman-backend" not in r.headers
