"""The llama-server peer: its command line and the requests it is sent, against an HTTP
double (the real server is in tests/bench/test_llamacpp_live.py)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

from dragoman.bench import llamacpp
from dragoman.bench.llamacpp import LlamaServerTarget, command, server_binary
from dragoman.bench.settings import BenchSettings
from dragoman.engine.llamacpp_build import binary
from dragoman.engine.prompts import chat_messages
from dragoman.errors import DragomanError
from dragoman.eval.workloads import Item
from dragoman.settings import LLAMA_CPP_PYTHON_VERSION

ITEM = Item("The light shines in the darkness.", "en", "fr", "verse")


def _flag(cmd: list[str], name: str) -> str:
    return cmd[cmd.index(name) + 1]


def test_command_gives_every_slot_dragomans_context_on_localhost(tmp_path: Path) -> None:
    s = BenchSettings(max_num_seqs=16, max_model_len=2048)
    cmd = command(tmp_path / "llama-server", tmp_path / "m.gguf", 8123, s, threads=2)
    assert cmd[0] == str(tmp_path / "llama-server")
    assert _flag(cmd, "--model") == str(tmp_path / "m.gguf")
    assert _flag(cmd, "--host") == "127.0.0.1"
    assert _flag(cmd, "--port") == "8123"
    assert _flag(cmd, "--parallel") == "16"
    assert _flag(cmd, "--ctx-size") == str(16 * 2048)
    assert _flag(cmd, "--threads") == _flag(cmd, "--threads-batch") == "2"
    assert _flag(cmd, "--alias") == s.model
    assert {"--cont-batching", "--jinja"} <= set(cmd)


def test_command_threads_default_to_the_usable_cpus(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(llamacpp, "default_threads", lambda: 3)
    cmd = command(tmp_path / "b", tmp_path / "m.gguf", 1, BenchSettings())
    assert _flag(cmd, "--threads") == "3"
    cmd = command(tmp_path / "b", tmp_path / "m.gguf", 1, BenchSettings(llama_threads=1))
    assert _flag(cmd, "--threads") == "1"


def test_server_binary_defaults_to_the_build_under_the_data_dir(
    tmp_path: Path, fake_llamacpp_build: Callable[..., Path]
) -> None:
    built = binary(tmp_path, LLAMA_CPP_PYTHON_VERSION, "llama-server")
    assert built == tmp_path / "llama.cpp" / LLAMA_CPP_PYTHON_VERSION / "src/build/bin/llama-server"
    with pytest.raises(DragomanError, match="scripts/build-llama-cpp"):
        server_binary(BenchSettings(data_dir=tmp_path))
    # an earlier dragoman's build (AMX compiled in, which crashes on AMX CPUs) is not used
    assert fake_llamacpp_build(tmp_path, stamped=False) == built
    with pytest.raises(DragomanError, match=r"earlier dragoman.*build-llama-cpp to build it again"):
        server_binary(BenchSettings(data_dir=tmp_path))
    fake_llamacpp_build(tmp_path)
    assert server_binary(BenchSettings(data_dir=tmp_path)) == built
    other = tmp_path / "elsewhere"
    other.write_text("")
    assert server_binary(BenchSettings(data_dir=tmp_path, llama_server=other)) == other


async def test_target_sends_dragomans_prompt_budget_and_penalty() -> None:
    seen: list[dict[str, object]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        assert request.url.path == "/v1/chat/completions"
        seen.append(json.loads(request.content))
        return httpx.Response(
            200,
            json={
                "choices": [{"message": {"content": "La lumière brille."}}],
                "usage": {"prompt_tokens": 44, "completion_tokens": 7},
                "timings": {"prompt_ms": 100.0, "predicted_ms": 400.0},
            },
        )

    target = LlamaServerTarget("http://127.0.0.1:1", "m", lambda item: 37, 1.05, 2048)
    async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as client:
        reply = await target.send(client, ITEM)
    assert seen == [
        {
            "model": "m",
            "messages": chat_messages(ITEM.text, "en", "fr"),
            "temperature": 0.0,
            "max_tokens": 37,
            "repeat_penalty": 1.05,
            "repeat_last_n": 2048,
            "stream": False,
        }
    ]
    assert (reply.status, reply.input_tokens, reply.output_tokens) == (200, 44, 7)
    assert reply.text == "La lumière brille."
    assert reply.inference_seconds == pytest.approx(0.5)
    assert reply.queue_seconds is None and reply.error is None


async def test_target_turns_an_error_answer_into_a_failed_reply() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(503, json={"error": {"code": 503, "message": "Loading model"}})

    target = LlamaServerTarget("http://127.0.0.1:1", "m", lambda item: 8, 1.0, 2048)
    async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as client:
        reply = await target.send(client, ITEM)
    assert reply.status == 503
    assert reply.error is not None and "Loading model" in reply.error
