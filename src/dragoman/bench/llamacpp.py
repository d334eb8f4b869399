"""llama.cpp's `llama-server` as a bench peer: the engine a CPU user would otherwise pick, run
on the same model's GGUF (Q4_K_M, as shipped), driven through its OpenAI-compatible chat
endpoint with dragoman's prompt, greedy decoding and dragoman's output budget per text.

Two builds of it: `llama-server`, the one scripts/build-llama-cpp compiles for this CPU
(GGML_NATIVE; the best this host allows) or the binary --llama-server names, and
`llama-server-wheel`, the prebuilt xllamacpp wheel's server (an AVX2 build), so one run can
compare them."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from dragoman.bench.servers import Launched, _popen, _wait, free_port
from dragoman.bench.settings import BenchSettings
from dragoman.bench.targets import Reply
from dragoman.engine.prompts import chat_messages
from dragoman.errors import DragomanError
from dragoman.eval.workloads import Item
from dragoman.settings import LLAMA_CPP_PYTHON_VERSION

NAME = "llama-server"
WHEEL = "llama-server-wheel"


def server_binary(s: BenchSettings) -> Path:
    """--llama-server, else what scripts/build-llama-cpp built under the data directory."""
    from dragoman.engine.llamacpp_build import STALE, binary, stale

    path = s.llama_server or binary(s.data_dir, LLAMA_CPP_PYTHON_VERSION, NAME)
    if not path.is_file():
        raise DragomanError(f"no llama-server at {path}; build it with scripts/build-llama-cpp")
    if s.llama_server is None and stale(s.data_dir, LLAMA_CPP_PYTHON_VERSION):
        raise DragomanError(f"{path} {STALE}")
    return path


def build_of(s: BenchSettings) -> str:
    """What the `llama-server` peer runs, for the results' metadata: its path and, for the
    build scripts/build-llama-cpp made, the flags it was built with."""
    from dragoman.engine.llamacpp_build import STAMPED, is_built

    try:
        path = server_binary(s)
    except DragomanError as exc:
        return f"none ({exc})"
    if s.llama_server is None and is_built(s.data_dir, LLAMA_CPP_PYTHON_VERSION):
        return f"{path} (built here: {' '.join(STAMPED.splitlines())})"
    return str(path)


def wheel_server() -> list[str]:
    """The xllamacpp wheel's server, started as dragoman's llama-cpp engine starts it."""
    from dragoman.engine import llamacpp_embedded

    if not llamacpp_embedded.available():
        raise DragomanError("llama-server-wheel needs the xllamacpp wheel (the `cpu` extra)")
    return [sys.executable, "-m", llamacpp_embedded.__name__]


def default_threads() -> int:
    return len(os.sched_getaffinity(0))


def command(
    binary: Path | list[str], gguf: Path, port: int, s: BenchSettings, threads: int | None = None
) -> list[str]:
    """llama-server as a user would run it for a service: continuous batching with as many
    slots as dragoman's max_num_seqs, each slot dragoman's context length."""
    t = str(threads or s.llama_threads or default_threads())
    return [
        *([str(binary)] if isinstance(binary, Path) else binary),
        "--model",
        str(gguf),
        "--alias",
        s.model,
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--threads",
        t,
        "--threads-batch",
        t,
        "--parallel",
        str(s.max_num_seqs),
        # The context is shared by the slots: each gets max_model_len tokens.
        "--ctx-size",
        str(s.max_num_seqs * s.max_model_len),
        "--cont-batching",
        "--jinja",  # the chat template the GGUF carries, as dragoman's tokenizer applies it
        "--no-webui",
        "--seed",
        "0",
    ]


def launch_llama_server(
    log_dir: Path, gguf: Path, s: BenchSettings, timeout: float = 300.0, wheel: bool = False
) -> Launched:
    port = free_port()
    log = log_dir / f"{WHEEL if wheel else NAME}-{port}.log"
    cmd = command(wheel_server() if wheel else server_binary(s), gguf, port, s)
    launched = Launched(f"http://127.0.0.1:{port}", _popen(cmd, log), log)
    return _wait(launched, "/health", timeout, False)  # 503 while the model loads


@dataclass
class LlamaServerTarget:
    """/v1/chat/completions with dragoman's messages, greedy, dragoman's max_tokens per text,
    and llama.cpp's own name for the repetition penalty. Its penalty divides a repeated
    token's logit as vLLM's does; the window is set to the context, so prompt and output
    count, as in vLLM."""

    url: str
    model: str
    budget: Callable[[Item], int]
    repetition_penalty: float
    window: int
    name: str = NAME

    def payload(self, item: Item) -> dict[str, Any]:
        return {
            "model": self.model,
            "messages": chat_messages(item.text, item.source, item.target),
            "temperature": 0.0,
            "max_tokens": self.budget(item),
            "repeat_penalty": self.repetition_penalty,
            "repeat_last_n": self.window,
            "stream": False,
        }

    async def send(self, client: httpx.AsyncClient, item: Item) -> Reply:
        r = await client.post(f"{self.url}/v1/chat/completions", json=self.payload(item))
        body: dict[str, Any] = r.json()
        if r.status_code != 200:
            return Reply(r.status_code, error=str(body.get("error", body))[:300])
        usage = body.get("usage") or {}
        timings = body.get("timings") or {}
        inference = None
        if "predicted_ms" in timings:  # prompt + decode time of this request in its slot
            inference = (timings.get("prompt_ms", 0.0) + timings["predicted_ms"]) / 1000
        return Reply(
            200,
            int(usage.get("prompt_tokens", 0)),
            int(usage.get("completion_tokens", 0)),
            None,
            inference,
            body["choices"][0]["message"]["content"],
        )
