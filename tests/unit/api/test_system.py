from __future__ import annotations

import asyncio

import httpx
from fastapi import FastAPI

from dragoman.api.app import build_app
from dragoman.service.settings import ServeSettings
from tests.fakes import FakeTranslator, factory_for


async def test_health_ok_and_ready_when_engine_loaded(
    client: httpx.AsyncClient, app: FastAPI
) -> None:
    assert (await client.get("/health")).json() == {"status": "ok", "engine": "ready"}
    r = await client.get("/ready")
    assert r.status_code == 200
    ready = r.json()
    assert ready.pop("glossary_store") == app.state.glossaries.files.store_id is not None
    assert ready == {
        "status": "ready",
        "model": "fake",
        "requests_unfinished": 0,
        "admitted_in_flight": 0,
        "admission_limit": 64,
    }


async def test_ready_is_503_and_translate_503_while_engine_loads(tmp_path) -> None:  # type: ignore[no-untyped-def]
    app = build_app(ServeSettings(data_dir=tmp_path), factory_for(FakeTranslator(), load_delay=30))
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as c:
            assert (await c.get("/health")).json() == {"status": "ok", "engine": "loading"}
            r = await c.get("/ready")
            assert r.status_code == 503
            assert r.json()["error"]["code"] == "engine_not_ready"
            r = await c.post(
                "/v1/translate", json={"text": "Hi", "source_lang": "en", "target_lang": "fr"}
            )
            assert r.status_code == 503
            assert r.json()["error"] == {
                "code": "engine_not_ready",
                "message": "the model is still loading; retry shortly",
            }


async def test_engine_that_fails_to_load_reports_unhealthy_and_asks_to_stop(tmp_path) -> None:  # type: ignore[no-untyped-def]
    reasons: list[str] = []

    def broken():  # type: ignore[no-untyped-def]
        raise RuntimeError("no such model")

    app = build_app(ServeSettings(data_dir=tmp_path), broken, on_fatal=reasons.append)
    async with app.router.lifespan_context(app):
        await asyncio.sleep(0.05)
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as c:
            r = await c.get("/health")
            assert r.status_code == 503
            assert "no such model" in r.json()["error"]["message"]
    assert reasons == ["engine failed to start: no such model"]


async def test_metrics_count_requests_by_route_and_status(client: httpx.AsyncClient) -> None:
    await client.post("/v1/translate", json={"text": "a", "source_lang": "en", "target_lang": "fr"})
    await client.post("/v1/translate", json={"text": "", "source_lang": "en", "target_lang": "fr"})
    await client.get("/no/such/path/123")
    # A client's own methods (h11 passes any token) collapse too: one series per token before.
    for method in ("FOO1", "FOO2", "PROPFIND"):
        await client.request(method, "/v1/translate")
    text = (await client.get("/metrics")).text
    assert (
        'dragoman_http_requests_total{method="POST",route="/v1/translate",status="200"} 1.0' in text
    )
    assert (
        'dragoman_http_requests_total{method="POST",route="/v1/translate",status="422"} 1.0' in text
    )
    # Unmatched paths collapse into one label value instead of one per path.
    assert 'route="other",status="404"' in text
    assert "/no/such/path" not in text
    assert 'method="other",route="/v1/translate",status="405"} 3.0' in text
    assert "FOO1" not in text and "PROPFIND" not in text
    assert 'dragoman_translations_total{finish_reason="stop"} 1.0' in text
    assert "dragoman_http_request_duration_seconds_bucket" in text
    assert "dragoman_http_requests_in_flight" in text


async def test_openapi_docs_are_served(client: httpx.AsyncClient) -> None:
    assert (await client.get("/docs")).status_code == 200
    spec = (await client.get("/openapi.json")).json()
    assert "/v1/translate" in spec["paths"]


async def test_info_names_a_loaded_model_whose_files_were_removed_since(
    serve, fake: FakeTranslator, tmp_path
) -> None:  # type: ignore[no-untyped-def]
    """/v1/info checked each vLLM engine's prepared model again at every call: once a `model
    prepare --force` had removed it under a running server, /v1/info was a 500."""
    from dragoman.engine.host_defaults import plan_engine
    from dragoman.host import Host
    from dragoman.settings import EngineSettings

    host = Host("bf16 CPU", "x86_64", ("avx2", "avx512_bf16"), 2, 2, (0, 1), 24.0, 20.0, None, None)
    model = EngineSettings().model  # the catalogue's default, not prepared in tmp_path
    fake.plans = {model: plan_engine(EngineSettings(), host, gpu=False)}
    async with serve(model=model) as (_app, c):
        r = await c.get("/v1/info")
    assert r.status_code == 200, r.text
    assert r.json()["engines"][model]["model"] == str(tmp_path / "models" / model)
