"""The app on a local Ray cluster: every API surface through the ingress, by pair to the model
deployment, answered by its replicas; the real engine translates through it too."""

from __future__ import annotations

import deepl
import httpx
import pytest
from libretranslatepy import LibreTranslateAPI
from openai import OpenAI

from dragoman.service.settings import ModelSpec
from tests.deploy.ray._cluster import (
    ECHO_DEPLOYMENT,
    ECHO_MODEL,
    Cluster,
    echo_settings,
    wait_for,
)

pytestmark = pytest.mark.ray


def test_two_echo_replicas_answer_every_surface(deployed: Cluster) -> None:
    deployed.deploy(echo_settings(min_replicas=2, max_replicas=2))
    assert deployed.running(ECHO_DEPLOYMENT) == 2
    assert deployed.running("ingress") == 1
    url = deployed.url

    native = httpx.post(
        f"{url}/v1/translate",
        json={"text": ["Hello there", "Good night"], "source_lang": "en", "target_lang": "fr"},
        timeout=30,
    )
    assert native.status_code == 200, native.text
    assert len(native.headers.get_list("x-request-id")) == 1
    body = native.json()
    assert [t["text"] for t in body["translations"]] == ["Hello there", "Good night"]
    assert body["model"] == ECHO_MODEL

    lt = LibreTranslateAPI(f"{url}/")
    assert lt.translate("Thank you very much.", "en", "de") == "Thank you very much."

    dl = deepl.Translator("unused", server_url=url)
    result = dl.translate_text(["Guten Morgen"], source_lang="DE", target_lang="FR")
    assert [r.text for r in result] == ["Guten Morgen"]

    oa = OpenAI(base_url=f"{url}/v1", api_key="unused")
    assert [m.id for m in oa.models.list().data] == [ECHO_MODEL]
    answer = oa.chat.completions.create(
        model=ECHO_MODEL, messages=[{"role": "user", "content": "one two three"}], max_tokens=2
    )
    assert answer.choices[0].message.content == "one two"
    assert answer.choices[0].finish_reason == "length"
    chunks = oa.chat.completions.create(
        model=ECHO_MODEL, messages=[{"role": "user", "content": "streamed words"}], stream=True
    )
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == (
        "streamed words"
    )


def test_replica_counts_and_errors_come_through_the_ingress(deployed: Cluster) -> None:
    deployed.deploy(echo_settings(min_replicas=2, max_replicas=2))
    with httpx.Client(base_url=deployed.url, timeout=30) as client:
        # A pair the app does not serve is the usual 400, in each surface's shape.
        native = client.post(
            "/v1/translate", json={"text": "Hi", "source_lang": "en", "target_lang": "zh"}
        )
        assert native.status_code == 400
        assert native.json()["error"]["code"] == "unsupported_language"
        lt = client.post("/translate", json={"q": "Hi", "source": "en", "target": "zh"})
        assert lt.status_code == 400 and "error" in lt.json()
        # The ingress is ready, and admits for both replicas (one server's bound each) once it
        # has read that both run (it may first have seen one: the next read is within 10
        # status intervals).
        ready = wait_for(
            "the ingress to admit for 2 replicas",
            lambda: (r := client.get("/ready").json())["admission_limit"] == 2 * 64 and r,
            10,
        )
        assert ready["status"] == "ready"
        languages = client.get("/v1/languages").json()
        assert sorted(lang["code"] for lang in languages["languages"]) == ["de", "en", "fr"]


def test_each_pair_reaches_its_models_deployment(deployed: Cluster) -> None:
    models = [
        ModelSpec(name="qwen", model="qwen2.5-coder-0.5b-instruct", languages=["en", "de"]),
        ModelSpec(name="gemma", model="gemma-3-270m", pairs=["en-fr"]),
    ]
    deployed.deploy(echo_settings(models=models))
    assert deployed.running("model-qwen") == deployed.running("model-gemma") == 1
    with httpx.Client(base_url=deployed.url, timeout=30) as client:
        for target, model in (("de", "qwen"), ("fr", "gemma")):
            body = {"text": "Hello", "source_lang": "en", "target_lang": target}
            r = client.post("/v1/translate", json=body)
            assert r.status_code == 200, r.text
            assert r.json()["model"] == model
        pairs = client.get("/v1/languages").json()["pairs"]
        assert {(p["source"], p["target"], p["model"]) for p in pairs} == {
            ("de", "en", "qwen"),
            ("en", "de", "qwen"),
            ("en", "fr", "gemma"),
        }
        # fr->en is no model's pair: the usual 400, not a 404 or a hang.
        r = client.post(
            "/v1/translate", json={"text": "Salut", "source_lang": "fr", "target_lang": "en"}
        )
        assert r.status_code == 400


@pytest.mark.integration
def test_real_engine_replica_translates(deployed: Cluster) -> None:
    settings = echo_settings(
        architecture="continuous", languages=["en", "fr"], replica_cpus=2, drain_seconds=5
    )
    seconds = deployed.deploy(settings)
    r = httpx.post(
        f"{deployed.url}/v1/translate",
        json={
            "text": "Thank you very much for your help.",
            "source_lang": "en",
            "target_lang": "fr",
        },
        timeout=300,
    )
    assert r.status_code == 200, r.text
    out = r.json()["translations"][0]
    assert "merci" in out["text"].lower(), out
    assert out["finish_reason"] == "stop"
    assert out["output_tokens"] > 0
    print(f"real-engine app up in {seconds:.1f} s; answer {out['text']!r}")


def test_whole_server_replicas_answer_every_surface(deployed: Cluster) -> None:
    deployed.deploy(echo_settings(min_replicas=2, max_replicas=2, ray_layout="whole"))
    assert deployed.running("server") == 2
    assert deployed.running("ingress") == 0  # no hop of its own
    url = deployed.url
    with httpx.Client(base_url=url, timeout=30) as client:
        native = client.post(
            "/v1/translate",
            json={"text": ["Hello there", "Good night"], "source_lang": "en", "target_lang": "fr"},
        )
        assert native.status_code == 200, native.text
        assert [t["text"] for t in native.json()["translations"]] == ["Hello there", "Good night"]
        # One id, Serve's, echoed once (the app does not add its own copy behind Serve).
        asked = client.get("/health", headers={"X-Request-Id": "req-7"})
        assert asked.headers.get_list("x-request-id") == ["req-7"]
        assert len(native.headers.get_list("x-request-id")) == 1
        bad = client.post(
            "/v1/translate", json={"text": "Hi", "source_lang": "en", "target_lang": "zh"}
        )
        assert bad.status_code == 400
        assert bad.json()["error"]["code"] == "unsupported_language"
        assert client.get("/ready").json()["status"] == "ready"
    lt = LibreTranslateAPI(f"{url}/")
    assert lt.translate("Thank you very much.", "en", "de") == "Thank you very much."
    dl = deepl.Translator("unused", server_url=url)
    assert [r.text for r in dl.translate_text(["Guten Morgen"], target_lang="FR")] == [
        "Guten Morgen"
    ]
    oa = OpenAI(base_url=f"{url}/v1", api_key="unused")
    answer = oa.chat.completions.create(
        model=ECHO_MODEL, messages=[{"role": "user", "content": "one two three"}], max_tokens=2
    )
    assert answer.choices[0].message.content == "one two"
