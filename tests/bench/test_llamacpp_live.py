"""The real llama-server peer on the default model's GGUF, started as the bench starts it, gets
a translation with dragoman's prompt. Skipped unless scripts/build-llama-cpp has built it."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from dragoman.bench.llamacpp import LlamaServerTarget, launch_llama_server, server_binary
from dragoman.bench.servers import Launched
from dragoman.bench.settings import BenchSettings
from dragoman.errors import DragomanError
from dragoman.eval.workloads import Item
from dragoman.models.prepare import gguf_path

pytestmark = pytest.mark.llamacpp


@pytest.fixture(scope="module")
def settings() -> BenchSettings:
    s = BenchSettings(max_num_seqs=2, max_model_len=512)
    try:
        server_binary(s)
    except DragomanError as exc:
        pytest.skip(str(exc))
    return s


@pytest.fixture(scope="module")
def llama(settings: BenchSettings, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Launched]:
    gguf = gguf_path(settings.model, settings.data_dir)
    server = launch_llama_server(tmp_path_factory.mktemp("llama"), gguf, settings, timeout=120)
    yield server
    server.stop()


async def test_llama_server_translates_with_dragomans_prompt(
    llama: Launched, settings: BenchSettings
) -> None:
    target = LlamaServerTarget(llama.url, settings.model, lambda item: 32, 1.05, 512)
    item = Item("Thank you very much for your help.", "en", "fr", "ui")
    async with httpx.AsyncClient(timeout=60) as client:
        reply = await target.send(client, item)
    assert reply.status == 200, reply.error
    assert 0 < reply.output_tokens <= 32
    assert reply.input_tokens > 20  # the system prompt and the instruction came through
    assert "merci" in reply.text.lower()
    assert reply.inference_seconds is not None and reply.inference_seconds > 0
