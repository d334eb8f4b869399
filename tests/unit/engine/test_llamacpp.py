"""The llama.cpp engine's request shaping, answers and error mapping against an HTTP double, and
its child's start and stop on small stand-in processes (the real llama-server is in
tests/bench/test_llamacpp_engine_live.py)."""

from __future__ import annotations

import asyncio
import json
import sys
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import httpx
import psutil
import pytest

from dragoman.engine import _llamacpp_process, llamacpp, llamacpp_embedded
from dragoman.engine._llamacpp_process import LlamaServerProcess, command
from dragoman.engine._llamacpp_slots import slot_client
from dragoman.engine.llamacpp import (
    LlamaCppTranslator,
    server_launcher,
    thread_count,
)
from dragoman.engine.prompts import RETRY_TEMPERATURE, Insisted, insist_note
from dragoman.errors import DragomanError, EngineDead, EngineFailed
from dragoman.host import detect
from dragoman.settings import EngineSettings


class WordTokenizer:
    """A token a word: enough for prompts, budgets and the guard."""

    def __init__(self) -> None:
        self.vocab: dict[str, int] = {}

    def apply_chat_template(self, messages: list[dict[str, str]], **kw: Any) -> str:
        return " ".join(m["content"] for m in messages)

    def encode(self, text: str, add_special_tokens: bool = False) -> list[int]:
        return [self.vocab.setdefault(w, len(self.vocab)) for w in text.split()]

    def decode(self, ids: list[int], skip_special_tokens: bool = True) -> str:
        words = {i: w for w, i in self.vocab.items()}
        return " ".join(words[i] for i in ids)


class Child:
    """The managed process, as the translator sees it."""

    url = "http://llama.test"

    def __init__(self) -> None:
        self.code: int | None = None
        self.headers = {"Authorization": "Bearer test-key"}

    def exit_code(self) -> int | None:
        return self.code


class Endless(httpx.AsyncByteStream):
    """A stream that never ends, and says when its connection is closed."""

    def __init__(self) -> None:
        self.closed = asyncio.Event()
        self.read = asyncio.Event()

    async def __aiter__(self) -> AsyncIterator[bytes]:
        yield b'data: {"content": "Bon", "tokens": [1], "stop": false}\n\n'
        self.read.set()  # the first chunk was taken; the translation waits for more
        await asyncio.Event().wait()

    async def aclose(self) -> None:
        self.closed.set()


Handler = Callable[[httpx.Request], httpx.Response]


def translator(
    handler: Handler, child: Child | None = None, fmt: str = "chat", **changes: Any
) -> LlamaCppTranslator:
    settings = EngineSettings(max_model_len=512, **changes)
    client = httpx.AsyncClient(base_url=Child.url, transport=httpx.MockTransport(handler))
    return LlamaCppTranslator(
        client, child or Child(), settings, WordTokenizer(), ("en", "fr"), fmt
    )


def sse(*messages: dict[str, Any]) -> bytes:
    return b"".join(b"data: " + json.dumps(m).encode() + b"\n\n" for m in messages)


def final(**kw: Any) -> dict[str, Any]:
    return {"stop": True, "stop_type": "eos", "tokens_predicted": 2, "tokens": [], **kw}


def test_payload_is_dragomans_prompt_budget_and_penalty_greedy_and_cached() -> None:
    t = translator(lambda r: httpx.Response(500))
    ids, budget = t.prompts.build("Thank you very much.", "en", "fr")
    body = t.payload(ids, budget)
    assert body["prompt"] == ids
    assert body["n_predict"] == budget == 3 * 4 + 16  # dragoman's budget for 4 words
    assert body["temperature"] == 0.0
    assert body["cache_prompt"] is True
    assert body["repeat_penalty"] == 1.05
    assert body["repeat_last_n"] == 512  # prompt and output count, as in vLLM
    # One answer (a stream only for an output's tail); the guard reads its tokens.
    assert body["stream"] is False and body["return_tokens"] is True
    assert "stop" not in body


def test_payload_without_guard_is_one_answer_and_few_shot_stops_at_the_line() -> None:
    t = translator(lambda r: httpx.Response(500), fmt="few-shot", repeat_window=0)
    body = t.payload([1, 2], 8)
    assert body["stream"] is False
    assert body["stop"] == ["\n"]


async def test_short_answer_in_one_piece_fills_usage_finish_and_timings() -> None:
    seen: list[dict[str, Any]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        assert request.url.path == "/completion"
        seen.append(json.loads(request.content))
        timings = {"prompt_ms": 100.0, "predicted_ms": 200.0}
        return httpx.Response(
            200, json=final(content="Merci beaucoup.", tokens=[7, 8], timings=timings)
        )

    t = translator(handler)
    out = await t.translate("Thank you very much.", "en", "fr")
    assert out.text == "Merci beaucoup."
    assert out.finish_reason == "stop"
    assert len(seen) == 1 and seen[0]["stream"] is False
    assert seen[0]["n_predict"] == 3 * 4 + 16  # under UNSTREAMED_TOKENS: the whole budget
    assert out.input_tokens == len(seen[0]["prompt"])
    assert out.output_tokens == 2
    # Its slot's prompt and decode time, never more than the wall time seen here.
    assert 0 < out.inference_seconds <= 0.3
    assert out.queue_seconds >= 0
    assert t.num_unfinished_requests() == 0


async def test_a_text_asked_again_is_sampled_with_a_fixed_seed_and_its_note() -> None:
    seen: list[dict[str, Any]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(json.loads(request.content))
        return httpx.Response(200, json=final(content="Merci.", tokens=[7]))

    t = translator(handler)
    await t.translate("Thank you.", "en", "fr")
    note = insist_note("Thank you.", "fr", "language")
    await t.translate(Insisted("Thank you.", note), "en", "fr")
    first, again = seen
    assert first["temperature"] == 0.0 and "seed" not in first
    assert again["temperature"] == RETRY_TEMPERATURE > 0 and again["seed"] == 0
    # vLLM's sampling: the whole distribution, no top-k, top-p or min-p cut
    assert (again["top_k"], again["top_p"], again["min_p"]) == (0, 1.0, 0.0)
    # the second prompt carries the note (in the target language), the first does not
    assert len(again["prompt"]) > len(first["prompt"])


async def test_long_output_streams_its_tail_from_the_tokens_so_far(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(llamacpp, "UNSTREAMED_TOKENS", 2)
    seen: list[dict[str, Any]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(json.loads(request.content))
        timings = {"prompt_ms": 10.0, "predicted_ms": 20.0}
        ids = t._tokenizer.encode("Merci bien beau coup.")
        if len(seen) == 1:
            head = final(content="Merci", tokens=ids[:2], stop_type="limit", timings=timings)
            return httpx.Response(200, json=head)
        body = sse(
            {"content": " beau", "tokens": ids[2:3], "stop": False},
            final(content="coup.", tokens=ids[3:], timings=timings),
        )
        return httpx.Response(200, content=body)

    t = translator(handler)
    out = await t.translate("Thank you very much.", "en", "fr")
    head, tail = seen
    assert (head["stream"], head["n_predict"]) == (False, 2)
    # The tail goes on from the prompt and the tokens so far, within what is left of the budget.
    assert tail["stream"] is True
    assert tail["prompt"] == head["prompt"] + t._tokenizer.encode("Merci bien")
    assert tail["n_predict"] == 3 * 4 + 16 - 2
    assert out.text == "Merci bien beau coup."  # the whole output decoded from its tokens
    assert (out.finish_reason, out.output_tokens) == ("stop", 4)
    assert 0 < out.inference_seconds <= 0.06  # both answers' slot time


async def test_budget_reached_is_length() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        body = final(content="Merci", tokens=[7], stop_type="limit", tokens_predicted=1)
        return httpx.Response(200, json=body)

    out = await translator(handler, repeat_window=0).translate("Thanks.", "en", "fr")
    assert (out.text, out.finish_reason, out.output_tokens) == ("Merci", "length", 1)


async def test_a_loop_in_the_first_answer_is_cut_by_the_guard() -> None:
    seen: list[dict[str, Any]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(json.loads(request.content))
        tra, la = t._tokenizer.encode("Tra la")
        looped = final(content="Tra" + " la" * 40, tokens=[tra] + [la] * 40, stop_type="limit")
        return httpx.Response(200, json=looped)

    t = translator(handler)
    # A source that does not repeat itself: the loop is cut to its first copy.
    out = await t.translate(" ".join(f"word{i}" for i in range(30)), "en", "fr")
    assert out.finish_reason == "repetition"
    assert out.text == "Tra la"
    assert len(seen) == 1  # no tail asked for


async def test_a_loop_in_the_streamed_tail_is_cut_and_the_stream_closed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(llamacpp, "UNSTREAMED_TOKENS", 1)
    loop = [{"content": " la", "tokens": [5], "stop": False} for _ in range(40)]

    class Looping(Endless):
        async def __aiter__(self) -> AsyncIterator[bytes]:
            yield sse(*loop)
            await asyncio.Event().wait()

    stream = Looping()

    def handler(request: httpx.Request) -> httpx.Response:
        if not json.loads(request.content)["stream"]:
            return httpx.Response(200, json=final(content="Tra", tokens=[4], stop_type="limit"))
        return httpx.Response(200, stream=stream)

    t = translator(handler)
    out = await t.translate(" ".join(["word"] * 30), "en", "fr")
    assert out.finish_reason == "repetition"
    assert out.output_tokens < 40
    assert stream.closed.is_set()  # llama-server stops a slot whose client is gone


async def test_cancelled_translation_closes_the_request() -> None:
    stream = Endless()
    t = translator(lambda r: httpx.Response(200, stream=stream))
    task = asyncio.create_task(t.translate("Thank you.", "en", "fr"))
    async with asyncio.timeout(5):
        await stream.read.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await stream.closed.wait()
    assert t.num_unfinished_requests() == 0


async def test_error_answer_is_engine_failed_with_its_message() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(500, json={"error": {"code": 500, "message": "slot failed"}})

    with pytest.raises(EngineFailed, match="llama-server answered 500: slot failed"):
        await translator(handler).translate("Thank you.", "en", "fr")


async def test_stream_cut_short_is_engine_failed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(llamacpp, "UNSTREAMED_TOKENS", 1)

    def handler(request: httpx.Request) -> httpx.Response:
        if not json.loads(request.content)["stream"]:
            return httpx.Response(200, json=final(content="Mer", tokens=[1], stop_type="limit"))
        return httpx.Response(200, content=sse({"content": "ci", "tokens": [2], "stop": False}))

    with pytest.raises(EngineFailed, match="ended before the answer"):
        await translator(handler).translate("Thank you.", "en", "fr")


async def test_lost_connection_is_engine_failed_while_the_child_lives() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        raise httpx.RemoteProtocolError("peer closed connection")

    with pytest.raises(EngineFailed, match=r"RemoteProtocolError\('peer closed connection"):
        await translator(handler).translate("Thank you.", "en", "fr")


async def test_lost_connection_after_the_child_exited_is_engine_dead() -> None:
    child = Child()

    def handler(request: httpx.Request) -> httpx.Response:
        child.code = -9
        raise httpx.ConnectError("connection refused")

    with pytest.raises(EngineDead, match=r"llama-server exited \(-9\)"):
        await translator(handler, child).translate("Thank you.", "en", "fr")


async def test_health_of_an_exited_child_is_engine_dead() -> None:
    child = Child()
    child.code = 1
    with pytest.raises(EngineDead, match="restart the server"):
        await translator(lambda r: httpx.Response(200), child).check_health()


def test_command_gives_every_slot_the_context_on_localhost(tmp_path: Path) -> None:
    cmd = command(
        [str(tmp_path / "llama-server")],
        tmp_path / "m.gguf",
        8123,
        alias="m",
        threads=2,
        slots=16,
        max_model_len=2048,
    )

    def flag(name: str) -> str:
        return cmd[cmd.index(name) + 1]

    assert (flag("--host"), flag("--port"), flag("--parallel")) == ("127.0.0.1", "8123", "16")
    assert flag("--ctx-size") == str(16 * 2048)
    assert flag("--threads") == flag("--threads-batch") == "2"
    assert "--cont-batching" in cmd


async def test_requests_past_the_slots_wait_for_a_connection_without_a_timeout() -> None:
    # Sentences of long texts outnumber the slots at 16 clients; they must queue, not fail.
    async with slot_client("http://llama.test", 16) as client:
        assert client.timeout.pool is None and client.timeout.read is None
        assert client.timeout.connect == 10.0


def test_threads_follow_the_plans_cpu_choice() -> None:
    host = detect()
    assert thread_count("0-1,3", host) == 3
    assert thread_count("2", host) == 1
    assert thread_count("nobind", host) == len(host.usable_cpus)
    assert thread_count("auto", host) == max(1, len(host.usable_cpus) - 1)


def test_missing_server_says_how_to_get_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(llamacpp_embedded, "available", lambda: False)
    s = EngineSettings(data_dir=tmp_path)
    with pytest.raises(DragomanError, match="install the prebuilt wheel") as exc:
        server_launcher(s)
    assert "scripts/build-llama-cpp" in exc.value.message


def test_launcher_prefers_the_named_binary_then_the_build_then_the_wheel(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fake_llamacpp_build: Callable[..., Path]
) -> None:
    named = tmp_path / "my-llama-server"
    named.write_text("")
    assert server_launcher(EngineSettings(data_dir=tmp_path, llama_server=named)) == [str(named)]
    with pytest.raises(DragomanError, match="no such file"):
        server_launcher(EngineSettings(data_dir=tmp_path, llama_server=tmp_path / "none"))
    wheel = [sys.executable, "-m", "dragoman.engine.llamacpp_embedded"]
    monkeypatch.setattr(llamacpp_embedded, "available", lambda: True)
    assert server_launcher(EngineSettings(data_dir=tmp_path)) == wheel
    built = fake_llamacpp_build(tmp_path, stamped=False)  # an earlier dragoman's (AMX in)
    assert server_launcher(EngineSettings(data_dir=tmp_path)) == wheel  # not that one
    monkeypatch.setattr(llamacpp_embedded, "available", lambda: False)
    with pytest.raises(DragomanError, match="crashes on CPUs with AMX"):
        server_launcher(EngineSettings(data_dir=tmp_path))
    fake_llamacpp_build(tmp_path)
    assert server_launcher(EngineSettings(data_dir=tmp_path)) == [str(built)]
    monkeypatch.setattr(llamacpp_embedded, "available", lambda: True)
    assert server_launcher(EngineSettings(data_dir=tmp_path)) == [str(built)]  # before the wheel


def test_embedded_server_takes_the_flags_the_command_writes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("xllamacpp")
    monkeypatch.setenv("LLAMA_API_KEY", "the-key")  # as LlamaServerProcess.start gives it
    cmd = command(
        ["launcher"],
        tmp_path / "m.gguf",
        8123,
        alias="m",
        threads=2,
        slots=16,
        max_model_len=2048,
    )
    args = llamacpp_embedded.parser().parse_args(cmd[1:])
    p = llamacpp_embedded.params(args)
    assert (p.model.path, p.port, p.hostnames) == (str(tmp_path / "m.gguf"), 8123, ["127.0.0.1"])
    assert (p.n_parallel, p.n_ctx, p.cont_batching) == (16, 16 * 2048, True)
    assert p.cpuparams.n_threads == p.cpuparams_batch.n_threads == 2
    assert p.model_alias == {"m"} and p.ui is False
    assert p.cache_ram_mib == 0  # llama.cpp's 8 GiB of old prompts' states: memory grew
    assert p.api_keys == ["the-key"] and "the-key" not in cmd


def _wait_for(path: Path, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while not path.exists():
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.05)


def _child(tmp_path: Path, code: str) -> LlamaServerProcess:
    cmd = [sys.executable, "-c", code, "--port", "9"]
    return LlamaServerProcess(cmd, tmp_path / "child.log")


# A llama-server stand-in that, as llama-server with --api-key, answers 401 to a request
# without its key, which it takes from LLAMA_API_KEY (exits 2 without one).
KEYED_SERVER = """
import http.server, os, sys
key = os.environ.get("LLAMA_API_KEY") or sys.exit(2)
port = int(sys.argv[sys.argv.index("--port") + 1])

class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        ok = self.headers.get("Authorization") == "Bearer " + key
        self.send_response(200 if ok else 401)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass

http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler).serve_forever()
"""


async def test_the_server_gets_a_key_of_its_own_and_every_request_carries_it(
    tmp_path: Path,
) -> None:
    """Not on its command line (`ps` shows it to every user): in its environment."""
    cmd = [sys.executable, "-c", KEYED_SERVER, "--port", str(_llamacpp_process.free_port())]
    server = LlamaServerProcess(cmd, tmp_path / "server.log")
    server.start()
    try:
        await server.wait_healthy(within=30)  # its start-up polls carry the key
        key = server.api_key
        assert key is not None and len(key) >= 32
        assert server.headers == {"Authorization": f"Bearer {key}"}
        assert key not in " ".join(psutil.Process(server.pid).cmdline() + server.cmd)
        # The translator's health check (a connection of its own) and its slot client.
        async with slot_client(server.url, 2, server.headers) as client:
            t = LlamaCppTranslator(client, server, EngineSettings(), WordTokenizer(), ("en", "fr"))
            await t.check_health()
            assert (await client.get("/slots")).status_code == 200
        async with httpx.AsyncClient(base_url=server.url) as stranger:
            assert (await stranger.get("/slots")).status_code == 401
    finally:
        await server.stop()
    other = _child(tmp_path, "raise SystemExit(0)")
    other.start()
    assert other.api_key not in (None, key)  # a new one each start
    await other.stop()


async def test_child_that_exits_at_start_is_engine_dead_with_its_output(tmp_path: Path) -> None:
    child = _child(tmp_path, "print('no model here'); raise SystemExit(3)")
    child.start()
    with pytest.raises(EngineDead, match=r"exited \(3\): no model here"):
        await child.wait_healthy(within=30)
    await child.stop()


async def test_stop_kills_a_child_that_ignores_sigterm(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_llamacpp_process, "STOP_GRACE_SECONDS", 0.5)
    ready = tmp_path / "ready"
    code = (
        "import signal, time, pathlib; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
        f"pathlib.Path({str(ready)!r}).touch(); time.sleep(60)"
    )
    child = _child(tmp_path, code)
    child.start()
    await asyncio.to_thread(_wait_for, ready, 10)
    async with asyncio.timeout(10):
        await child.stop()
    assert child.exit_code() == -9


def test_llama_cpp_runs_the_q8_0_form_unless_told_to_run_the_shipped_file(
    tmp_path: Path,
) -> None:
    host = EngineSettings(data_dir=tmp_path)
    assert llamacpp.gguf_form(host) == "q8_0"
    plan = llamacpp.plan_llamacpp(host, detect(), str(tmp_path))
    assert plan.weights.value == "q8_0" and "Q8_0" in plan.weights.reason
    gguf, _ = llamacpp.info_plan(host)
    form = "qwen2.5-coder-0.5b-instruct-q4_k_m.q8_0-v1-1d9614638d18.gguf"  # the shipped sha's
    assert gguf.startswith(f"{tmp_path / 'models' / form} (not made yet: `dragoman model prepare`)")
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / form).write_bytes(b"made")
    gguf, _ = llamacpp.info_plan(host)
    assert gguf.startswith(str(tmp_path / "models" / form)) and "not made" not in gguf
    shipped = EngineSettings(data_dir=tmp_path, gguf_weights="shipped")
    assert llamacpp.gguf_form(shipped) == "shipped"
    assert llamacpp.plan_llamacpp(shipped, detect(), str(tmp_path)).weights.value == "shipped"
    gguf, _ = llamacpp.info_plan(shipped)
    assert gguf.startswith(str(tmp_path / "models" / "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"))
    # measured on the default model only: another catalogue model runs its file as shipped
    other = EngineSettings(data_dir=tmp_path, model="qwen2.5-coder-1.5b-instruct")
    assert llamacpp.gguf_form(other) == "shipped"
    assert "default model only" in llamacpp.choose_gguf("host", other.model).reason
    explicit = EngineSettings(data_dir=tmp_path, model=other.model, gguf_weights="q8_0")
    assert llamacpp.gguf_form(explicit) == "q8_0"
