"""`dragoman serve --architecture llama-cpp`: the real llama-server on the default model's GGUF,
started and owned by dragoman, translates through the native and the LibreTranslate surfaces,
and leaves no llama.cpp server behind when dragoman stops. Skipped unless llama.cpp's server is
there (the xllamacpp wheel of the `cpu` extra, or a build of scripts/build-llama-cpp)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator

import httpx
import psutil
import pytest

from dragoman.bench.servers import Launched, launch_dragoman
from dragoman.engine import llamacpp
from dragoman.engine.llamacpp import open_llamacpp, server_launcher
from dragoman.errors import DragomanError
from dragoman.models.catalogue import CATALOGUE, DEFAULT_MODEL
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
    # the host's GGUF form: the shipped file's layers as Q8_0, made at the first start
    assert engine["settings"]["weights"]["value"] == "q8_0"
    sha = CATALOGUE[DEFAULT_MODEL].sha256
    assert engine["model"].endswith(f".q8_0-v1-{sha[:12]}.gguf"), engine["model"]
    assert len(_llama_children(server.pid)) == 1


def test_libretranslate_translate_runs_on_llama_cpp(server: Launched) -> None:
    body = {"q": "Thank you very much.", "source": "en", "target": "de", "format": "text"}
    r = httpx.post(f"{server.url}/translate", json=body, timeout=ANSWER_SECONDS)
    assert r.status_code == 200, r.text
    assert "dank" in r.json()["translatedText"].lower()


# Long enough that its translation runs past the unstreamed first answer.
PARAGRAPH = (
    "The museum reopened on Monday after two years of work. Visitors can now see the old "
    "printing press in a room of its own, read the letters the printers wrote to their "
    "families, and try setting a line of type by hand. The café on the ground floor serves "
    "soup and bread at noon, and the garden behind the building is open until dusk. Tickets "
    "cost eight euros for adults; children under twelve enter free. Guided tours in French "
    "and English leave from the main hall every hour."
)


async def test_a_long_output_goes_on_where_its_first_answer_stopped(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The first UNSTREAMED_TOKENS tokens come in one answer and the rest as a stream that goes
    on from the prompt and those tokens: one whole translation, not a restart. (Not the tokens
    of a single answer one for one: llama.cpp's greedy output already varies with what its slot
    had cached.)"""
    monkeypatch.setattr(llamacpp, "UNSTREAMED_TOKENS", 32)  # this output is ~120 tokens
    settings = EngineSettings(max_num_seqs=1)
    try:
        server_launcher(settings)
    except DragomanError as exc:
        pytest.skip(str(exc))
    async with open_llamacpp(settings, ("en", "fr")) as t:
        out = await t.translate(PARAGRAPH, "en", "fr")
        _, budget = t.prompts.build(PARAGRAPH, "en", "fr")
    assert out.finish_reason == "stop", out
    assert 32 < out.output_tokens <= budget  # the tail was streamed, within the budget
    assert out.text.startswith("Le musée"), out.text
    assert out.text.count(out.text[:30]) == 1, out.text  # the tail did not start again
    assert "euros" in out.text and out.text.endswith("."), out.text  # up to the last sentences
    assert out.inference_seconds > 0


async def test_sentences_at_once_share_one_computed_prefix_restored_into_their_slots() -> None:
    """The real server saves a slot's prompt prefix and restores it into others: the pair's
    prefix is computed once for three sentences sent at once, and the slots that restored it
    translate as well as the one that computed it."""
    settings = EngineSettings(max_num_seqs=3, max_model_len=512)
    try:
        server_launcher(settings)
    except DragomanError as exc:
        pytest.skip(str(exc))
    texts = ("Thank you very much.", "Good morning, my friend.", "Where is the train station?")
    async with open_llamacpp(settings, ("en", "fr")) as t:
        outs = await asyncio.gather(*(t.translate(x, "en", "fr") for x in texts))
        bank = t._bank
        assert bank.enabled and (bank.computed, bank.restored) == (1, 2)
        again = await t.translate("Good night.", "en", "fr")  # a slot that holds it already
        assert (bank.computed, bank.restored) == (1, 2)
        # The server has a key of its own: another local process, without it, is refused.
        async with httpx.AsyncClient(base_url=t._server.url, timeout=ANSWER_SECONDS) as other:
            r = await other.post("/completion", json={"prompt": "Hello", "n_predict": 1})
            assert r.status_code == 401, r.text
    words = ("merci", "bonjour", "où")
    for out, word in zip(outs, words, strict=True):
        assert out.finish_reason == "stop" and word in out.text.lower(), outs
    assert "nuit" in again.text.lower(), again


def test_openai_chat_runs_on_llama_cpp(server: Launched) -> None:
    """The `openai` client on the llama.cpp engine, as on vLLM (test_openai_live.py): the model
    listed, an answer through the model's chat template, a stream of a fixed length with its
    usage chunk last, and a refusal as the client's typed error."""
    import openai

    from tests.integration.test_openai_live import HELLO

    with openai.OpenAI(
        base_url=f"{server.url}/v1", api_key="unused", timeout=ANSWER_SECONDS, max_retries=0
    ) as client:
        assert [m.id for m in client.models.list().data] == [DEFAULT_MODEL]
        out = client.chat.completions.create(
            model=DEFAULT_MODEL,
            messages=HELLO,  # type: ignore[arg-type]
            max_tokens=24,
            temperature=0,
        )
        choice = out.choices[0]
        assert "Paris" in (choice.message.content or ""), choice.message.content
        assert choice.finish_reason in ("stop", "length")
        assert out.usage is not None and out.usage.prompt_tokens > 10
        assert 0 < out.usage.completion_tokens <= 24
        stream = client.chat.completions.create(
            model=DEFAULT_MODEL,
            messages=HELLO,  # type: ignore[arg-type]
            max_completion_tokens=12,
            temperature=0,
            stream=True,
            stream_options={"include_usage": True},
            extra_body={"ignore_eos": True},
        )
        chunks = list(stream)
        text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
        assert "Paris" in text, text
        finishes = [c.choices[0].finish_reason for c in chunks if c.choices]
        assert finishes[-1] == "length" and not any(finishes[:-1])
        usage = chunks[-1].usage
        assert usage is not None and usage.completion_tokens == 12
        long = [{"role": "user", "content": "word " * 2000}]  # past --max-model-len 512
        with pytest.raises(openai.BadRequestError) as too_long:
            client.chat.completions.create(model=DEFAULT_MODEL, messages=long)  # type: ignore[arg-type]
        assert too_long.value.code == "context_length_exceeded"


def test_stopping_dragoman_stops_llama_server(server: Launched) -> None:
    children = _llama_children(server.pid)
    assert children
    server.stop()
    deadline = time.monotonic() + 30
    while any(c.is_running() and c.status() != psutil.STATUS_ZOMBIE for c in children):
        assert time.monotonic() < deadline, "llama-server outlived dragoman"
        time.sleep(0.2)
