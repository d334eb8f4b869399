"""`dragoman serve --architecture llama-cpp`: the real llama-server on the default model's GGUF,
started and owned by dragoman, translates through the native and the LibreTranslate surfaces,
and leaves no llama.cpp server behind when dragoman stops. Skipped unless llama.cpp's server is
there (the xllamacpp wheel of the `cpu` extra, or a build of scripts/build-llama-cpp)."""

from __future__ import annotations

import time
from collections.abc import Iterator

import httpx
import psutil
import pytest

from dragoman.bench.servers import Launched, launch_dragoman
from dragoman.engine.llamacpp import server_launcher
from dragoman.errors import DragomanError
from dragoman.settings import EngineSettings

pytestmark = pytest.mark.llamacpp

START_SECONDS = 180  # tokenizer, GGUF mapped, two small slots: ~10 s on 2 cores
ANSWER_SECONDS = 120  # a short sentence on a busy 2-core machine


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Launched]:
    try:
        server_launcher(EngineSettings())
    except DragomanError as exc:
        pytest.skip(str(exc))
    launched = launch_dragoman(
        tmp_path_factory.mktemp("llamacpp"),
        "--architecture",
        "llama-cpp",
        "--max-num-seqs",
        "2",
        "--max-model-len",
        "512",
        timeout=START_SECONDS,
    )
    yield launched
    launched.stop()


def _llama_children(pid: int) -> list[psutil.Process]:
    try:
        children = psutil.Process(pid).children(recursive=True)
    except psutil.NoSuchProcess:
        return []
    return [c for c in children if _is_llama(c)]


def _is_llama(p: psutil.Process) -> bool:
    """llama-server, or the wheel's embedded server (python -m ...llamacpp_embedded)."""
    try:
        return "llama-server" in p.name() or any("llamacpp_embedded" in a for a in p.cmdline())
    except psutil.Error:
        return False


def test_native_translate_runs_on_llama_cpp(server: Launched) -> None:
    body = {"text": "Thank you very much for your help.", "source_lang": "en", "target_lang": "fr"}
    r = httpx.post(f"{server.url}/v1/translate", json=body, timeout=ANSWER_SECONDS)
    assert r.status_code == 200, r.text
    item = r.json()["translations"][0]
    assert "merci" in item["text"].lower()
    assert item["finish_reason"] == "stop"
    assert item["input_tokens"] > 20 and 0 < item["output_tokens"] <= 3 * 8 + 16
    assert item["inference_seconds"] > 0
    r = httpx.get(f"{server.url}/v1/info", timeout=10)
    assert r.status_code == 200, r.text
    info = r.json()
    engine = next(iter(info["engines"].values()))
    assert engine["settings"]["engine"]["value"] == "llama.cpp"
    assert engine["model"].endswith(".gguf")
    assert len(_llama_children(server.pid)) == 1


def test_libretranslate_translate_runs_on_llama_cpp(server: Launched) -> None:
    body = {"q": "Thank you very much.", "source": "en", "target": "de", "format": "text"}
    r = httpx.post(f"{server.url}/translate", json=body, timeout=ANSWER_SECONDS)
    assert r.status_code == 200, r.text
    assert "dank" in r.json()["translatedText"].lower()


def test_stopping_dragoman_stops_llama_server(server: Launched) -> None:
    children = _llama_children(server.pid)
    assert children
    server.stop()
    deadline = time.monotonic() + 30
    while any(c.is_running() and c.status() != psutil.STATUS_ZOMBIE for c in children):
        assert time.monotonic() < deadline, "llama-server outlived dragoman"
        time.sleep(0.2)
