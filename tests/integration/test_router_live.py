"""End to end: `dragoman route` over two real dragoman servers with real engines, serving
different language pairs (the seed's layout: each server its own set of pairs). The second runs
on the engine that starts quickest here (llama.cpp where present): a fleet of mixed engines,
as an operator with AVX2 and AVX-512 hosts runs, and one vLLM start fewer."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from dragoman.bench.servers import Launched, launch_dragoman, launch_router
from tests.integration.conftest import quickest_engine

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def second_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Launched]:
    server = launch_dragoman(
        tmp_path_factory.mktemp("second"),
        "--languages",
        "en,de,zh",
        "--max-num-seqs",
        "8",
        *quickest_engine(),
        timeout=300,
    )
    yield server
    server.stop()


@pytest.fixture(scope="module")
def router(
    live_server: Launched, second_server: Launched, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Launched]:
    config = Path(tmp_path_factory.mktemp("router")) / "route.toml"
    config.write_text(
        f'[[backends]]\nname = "fr-server"\nurl = "{live_server.url}"\npairs = ["en-fr"]\n\n'
        f'[[backends]]\nname = "de-zh-server"\nurl = "{second_server.url}"\n'
    )
    server = launch_router(config.parent, "--config", str(config), "--check-interval", "0.5")
    yield server
    server.stop()


async def test_real_translations_routed_by_pair(router: Launched) -> None:
    async with httpx.AsyncClient(base_url=router.url, timeout=120) as c:
        for _ in range(50):  # wait for both backends to be admitted
            backends = (await c.get("/v1/backends")).json()
            if all(b["healthy"] for b in backends):
                break
            await asyncio.sleep(0.2)
        else:
            pytest.fail(f"backends not admitted after 50 checks: {backends}")
        fr, de = await asyncio.gather(
            c.post(
                "/v1/translate",
                json={
                    "text": "Thank you very much for your help.",
                    "source_lang": "en",
                    "target_lang": "fr",
                },
            ),
            c.post(
                "/v1/translate",
                json={
                    "text": "Thank you very much for your help.",
                    "source_lang": "en",
                    "target_lang": "de",
                },
            ),
        )
        assert fr.status_code == 200, fr.text
        assert fr.headers["x-dragoman-backend"] == "fr-server"
        assert "Merci" in fr.json()["translations"][0]["text"]
        assert de.headers["x-dragoman-backend"] == "de-zh-server"
        assert "Dank" in de.json()["translations"][0]["text"]
        # en-fr is configured on the first server only; en-ko is served by neither.
        ko = await c.post(
            "/v1/translate", json={"text": "Hi", "source_lang": "en", "target_lang": "ko"}
        )
        assert ko.status_code == 400
        pairs = {
            (p["source"], p["target"]): p["backends"]
            for p in (await c.get("/v1/languages")).json()["pairs"]
        }
        assert pairs[("en", "fr")] == ["fr-server"]
        assert pairs[("zh", "de")] == ["de-zh-server"]
        metrics = (await c.get("/metrics")).text
        assert 'dragoman_router_backend_requests_total{backend="fr-server",status="200"}' in metrics


def test_real_clients_unchanged_through_the_router(router: Launched) -> None:
    """libretranslatepy and deepl pointed at the proxy: routed by pair (a detected source by
    the target), reads passed to a backend, answers relayed as they are."""
    import deepl
    from libretranslatepy import LibreTranslateAPI

    deadline = time.monotonic() + 60
    while not all(b["healthy"] for b in httpx.get(f"{router.url}/v1/backends").json()):
        assert time.monotonic() < deadline, "backends not admitted in time"
        time.sleep(0.2)
    lt = LibreTranslateAPI(router.url + "/")
    out = lt.translate("Thank you very much for your help.", "en", "fr")
    assert out.strip() and out != "Thank you very much for your help."
    assert lt.detect("Vielen Dank für Ihre Hilfe.")[0]["language"] == "de"
    assert {"en", "fr"} <= {item["code"] for item in lt.languages()}
    translator = deepl.Translator("any-key", server_url=router.url)
    result = translator.translate_text("Thank you very much for your help.", target_lang="DE")
    assert result.detected_source_lang == "EN" and result.text.strip()
    assert result.billed_characters == len("Thank you very much for your help.")
    assert "DE" in {lang.code for lang in translator.get_target_languages()}
    assert translator.get_usage().character.count is not None


def test_openai_client_through_the_router(router: Launched) -> None:
    """Chat is not a translation: the proxy sends it to any healthy backend, streams as they
    come."""
    import openai

    client = openai.OpenAI(base_url=f"{router.url}/v1", api_key="any", max_retries=0)
    model = client.models.list().data[0].id
    reply = client.chat.completions.create(
        model=model,
        messages=[{"role": "user", "content": "Say hello in French, one word."}],
        max_tokens=8,
        temperature=0,
    )
    assert reply.choices[0].message.content and reply.usage is not None
    chunks = list(
        client.chat.completions.create(
            model=model,
            messages=[{"role": "user", "content": "Count from one to three."}],
            max_tokens=8,
            stream=True,
            stream_options={"include_usage": True},
        )
    )
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert chunks[-1].usage is not None and chunks[-1].usage.completion_tokens > 0
