"""The compatible surfaces through the real `dragoman route` over real echo-architecture
servers: translations routed by their pair (a detected source: by the target), reads passed to
any backend, the router's own refusals in each surface's shape."""

from __future__ import annotations

from pathlib import Path

import httpx
import openai
import pytest

from dragoman.bench.servers import Launched, launch_echo
from tests.router.test_routing import start


async def test_libretranslate_and_deepl_through_the_router(
    logs: Path, stop_all: list[Launched]
) -> None:
    fr = launch_echo(logs, "en,fr")
    de = launch_echo(logs, "en,de")
    stop_all += [fr, de]
    router = start(logs, stop_all, fr, de)
    async with httpx.AsyncClient(base_url=router.url, timeout=60) as c:
        # Mastodon: JSON list, source auto -> the backend serving the target.
        body = {"q": ["Good morning, my friend.", "12"], "source": "auto", "target": "de"}
        r = await c.post("/translate", json=body)
        assert r.status_code == 200, r.text
        assert r.headers["x-dragoman-backend"] == "b1"
        assert r.json()["translatedText"] == ["Good morning, my friend.", "12"]  # echo
        assert r.json()["detectedLanguage"][0]["language"] == "en"
        # TranslateYou: everything in the query string of a POST.
        r = await c.post("/translate", params={"q": "Hello", "source": "en", "target": "fr"})
        assert (r.status_code, r.headers["x-dragoman-backend"]) == (200, "b0")
        assert r.json() == {"translatedText": "Hello"}
        # DeepL, a form body with repeated text.
        form = {"text": ["Hello", "World"], "target_lang": "DE", "source_lang": "EN"}
        r = await c.post("/v2/translate", data=form, headers={"authorization": "DeepL-Auth-Key k"})
        assert (r.status_code, r.headers["x-dragoman-backend"]) == (200, "b1")
        assert [t["billed_characters"] for t in r.json()["translations"]] == [5, 5]
        # Reads go to any backend.
        for method, path in (("GET", "/languages"), ("GET", "/v2/languages"), ("GET", "/v2/usage")):
            r = await c.request(method, path)
            assert r.status_code == 200, (path, r.text)
        r = await c.post("/detect", data={"q": "Hello there, how are you?"})
        assert r.json()[0]["language"] == "en"
        # The router's own refusals, in the surface's shape.
        r = await c.post("/translate", json={"q": "Hello", "source": "en", "target": "ko"})
        assert (r.status_code, r.json()) == (400, {"error": "no backend serves en->ko"})
        r = await c.post("/v2/translate", json={"text": ["Hello"], "target_lang": "XX"})
        assert (r.status_code, r.json()) == (
            400,
            {"message": "Value for 'target_lang' not supported."},
        )
        r = await c.post("/translate", json={"q": "Hello", "source": "zz", "target": "fr"})
        assert (r.status_code, r.json()) == (400, {"error": "zz is not supported"})


async def test_openai_chat_streams_through_the_router(logs: Path, stop_all: list[Launched]) -> None:
    backend = launch_echo(logs, "en,fr")
    stop_all.append(backend)
    router = start(logs, stop_all, backend)
    async with httpx.AsyncClient(base_url=router.url, timeout=60) as c:
        model = (await c.get("/v1/models")).json()["data"][0]["id"]
        body = {
            "model": model,
            "messages": [{"role": "user", "content": "hi there"}],
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        async with c.stream("POST", "/v1/chat/completions", json=body) as r:
            assert r.status_code == 200
            assert r.headers["content-type"].startswith("text/event-stream")
            events = [line async for line in r.aiter_lines() if line.startswith("data: ")]
        assert events[-1] == "data: [DONE]"
        assert '"content":"hi there"' in "".join(events)
        r = await c.post("/v1/chat/completions", json={**body, "model": "no-such-model"})
        assert r.status_code == 404 and r.json()["error"]["code"] == "model_not_found"


# Two models under their own names, one of them also the plain echo server's default's name.
MODELS = """
[[models]]
name = "small"
model = "qwen2.5-coder-0.5b-instruct"
languages = ["en", "de"]

[[models]]
name = "echo:qwen2.5-coder-0.5b-instruct"
model = "qwen2.5-coder-0.5b-instruct"
pairs = ["en-fr"]
"""


async def test_openai_models_are_the_whole_fleets(logs: Path, stop_all: list[Launched]) -> None:
    """/v1/models was passed to any one backend: a client saw one backend's models only."""
    config = logs / "models.toml"
    config.write_text(MODELS)
    plain = launch_echo(logs, "en,fr")
    several = launch_echo(logs, "", "--config", str(config))
    stop_all += [plain, several]
    router = start(logs, stop_all, plain, several)
    client = openai.AsyncOpenAI(base_url=f"{router.url}/v1", api_key="unused", max_retries=0)
    async with client:
        for _ in range(4):  # whichever backend is least loaded: always the whole list
            ids = [m.id for m in (await client.models.list()).data]
            assert sorted(ids) == ["echo:qwen2.5-coder-0.5b-instruct", "small"]  # each once
        assert (await client.models.retrieve("small")).id == "small"
        with pytest.raises(openai.NotFoundError):
            await client.models.retrieve("no-such-model")
        answer = await client.chat.completions.create(
            model="small", messages=[{"role": "user", "content": "hello there"}]
        )
        assert (answer.model, answer.choices[0].message.content) == ("small", "hello there")
