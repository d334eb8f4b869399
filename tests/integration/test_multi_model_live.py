"""Two real models in one server, each its own engine: Qwen (chat template) for en/de/zh and
Gemma 3 270M base (few-shot prompt) for en->fr."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from dragoman.bench.servers import Launched, launch_dragoman

pytestmark = pytest.mark.integration

CONFIG = """
[[models]]
name = "qwen"
model = "qwen2.5-coder-0.5b-instruct"
languages = ["en", "de", "zh"]

[[models]]
name = "gemma"
model = "gemma-3-270m"
pairs = ["en-fr"]
"""


@pytest.fixture(scope="module")
def multi(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Launched]:
    folder = tmp_path_factory.mktemp("multi")
    (folder / "server.toml").write_text(CONFIG)
    server = launch_dragoman(
        folder, "--config", str(folder / "server.toml"), "--max-num-seqs", "8", timeout=400
    )
    yield server
    server.stop()


def translate(url: str, text: str, source: str, target: str) -> httpx.Response:
    return httpx.post(
        f"{url}/v1/translate",
        json={"text": text, "source_lang": source, "target_lang": target},
        timeout=120,
    )


def test_each_pair_goes_to_its_model(multi: Launched) -> None:
    fr = translate(multi.url, "Thank you very much for your help.", "en", "fr")
    assert fr.status_code == 200, fr.text
    assert fr.json()["model"] == "gemma"
    assert "Merci" in fr.json()["translations"][0]["text"]
    de = translate(multi.url, "Thank you very much for your help.", "en", "de")
    assert de.json()["model"] == "qwen"
    assert "Dank" in de.json()["translations"][0]["text"]


def test_pairs_not_served_are_400(multi: Launched) -> None:
    r = translate(multi.url, "Hello", "fr", "de")  # both languages served, not this pair
    assert r.status_code == 400
    assert r.json()["error"]["message"] == "no model on this server translates fr->de"
    assert translate(multi.url, "Hello", "en", "ko").status_code == 400


def test_languages_lists_pairs_and_models(multi: Launched) -> None:
    body = httpx.get(f"{multi.url}/v1/languages").json()
    pairs = {(p["source"], p["target"]): p["model"] for p in body["pairs"]}
    assert pairs[("en", "fr")] == "gemma"
    assert pairs[("zh", "de")] == "qwen"
    assert ("fr", "en") not in pairs
    assert httpx.get(f"{multi.url}/ready").status_code == 200
