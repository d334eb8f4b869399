"""`--architecture llama-cpp`: dragoman's translator on a managed llama.cpp `llama-server` that
runs the catalogue model's GGUF (the default model's values re-encoded as Q8_0:
`models/gguf_forms.py`), owned by `open_llamacpp`.

On a CPU one sequence decodes at the speed the weights stream from memory; the shipped 4-6-bit
GGUF moves a quarter of bf16's bytes per token (its Q8_0 form half), so llama.cpp wins
single-stream latency while vLLM's batched kernels win throughput at many streams
(benchmarks/README.md). The prompt, output
budget, repetition penalty and guard are dragoman's own, so both engines do the same work.
"""

from __future__ import annotations

import logging
import shutil
import sys
import time
from collections.abc import AsyncGenerator, AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx

from dragoman.engine import sampling
from dragoman.engine._llamacpp_chat import (
    CHAT_SLOT,
    chat_body,
    chat_prompt,
    generation_defaults,
    stream_chat,
)
from dragoman.engine._llamacpp_process import (
    LlamaServerProcess,
    command,
    error_message,
    free_port,
    stream_messages,
)
from dragoman.engine._llamacpp_slots import PrefixBank, SlotPicker, slot_client, slot_seconds
from dragoman.engine.guard import RepetitionGuard, guard_for
from dragoman.engine.host_defaults import Choice, EnginePlan, choose_threads, kv_bytes_per_token
from dragoman.engine.hygiene import clean_output
from dragoman.engine.prompts import (
    RETRY_TEMPERATURE,
    SAMPLING,
    Insisted,
    PromptBuilder,
    PromptFormat,
)
from dragoman.engine.protocol import ChatChunk, ChatParams, FinishReason, Terms, Translation
from dragoman.errors import DragomanError, EngineDead, EngineFailed
from dragoman.host import Host, detect

if TYPE_CHECKING:
    from dragoman.models.gguf_forms import GgufForm
    from dragoman.settings import EngineSettings

log = logging.getLogger(__name__)

START_TIMEOUT_SECONDS = 300.0
HEALTH_TIMEOUT_SECONDS = 30.0  # a busy server answers /health from its HTTP threads
# Output tokens asked for in one answer before the rest is streamed (see `_generate`): the
# translations of most sentences fit (benchmarks/README.md "Which engine on which host").
UNSTREAMED_TOKENS = 128


def server_launcher(settings: EngineSettings) -> list[str]:
    """How llama.cpp's server starts: the binary --llama-server names; else what
    scripts/build-llama-cpp built for this CPU under the data directory (faster than the wheel
    where measured); else the prebuilt wheel's embedded server (xllamacpp, built for AVX2)."""
    from dragoman.engine import llamacpp_embedded
    from dragoman.engine.llamacpp_build import STALE, binary, is_built, stale
    from dragoman.settings import LLAMA_CPP_PYTHON_VERSION

    if settings.llama_server is not None:
        if not settings.llama_server.is_file():
            raise DragomanError(f"--llama-server {settings.llama_server}: no such file")
        return [str(settings.llama_server)]
    built = binary(settings.data_dir, LLAMA_CPP_PYTHON_VERSION, "llama-server")
    if is_built(settings.data_dir, LLAMA_CPP_PYTHON_VERSION):
        return [str(built)]
    if llamacpp_embedded.available():
        return [sys.executable, "-m", llamacpp_embedded.__name__]
    if stale(settings.data_dir, LLAMA_CPP_PYTHON_VERSION):
        raise DragomanError(f"{built} {STALE}")
    raise DragomanError(
        "--architecture llama-cpp needs llama.cpp's server: install the prebuilt wheel "
        "(xllamacpp, in the `cpu` extra), build it with scripts/build-llama-cpp (about 10 "
        "minutes on 2 cores), or give its path with --llama-server"
    )


def launcher_name(launcher: list[str]) -> str:
    return "the xllamacpp wheel's server" if launcher[0] == sys.executable else launcher[0]


def thread_count(cpus: str, host: Host) -> int:
    """llama.cpp's -t from the plan's CPU choice: a list ("0-1,3") counts its CPUs; "auto"
    (vLLM's reserve-one) leaves one to the front end; "nobind" takes every usable CPU."""
    n = len(host.usable_cpus)
    if cpus == "auto":
        return max(1, n - 1)
    if cpus == "nobind":
        return n
    count = 0
    for part in cpus.split(","):
        lo, _, hi = part.partition("-")
        count += int(hi or lo) - int(lo) + 1
    return max(1, count)


def choose_gguf(setting: str, model: str) -> Choice:
    """The GGUF form llama.cpp runs (`models/gguf_forms.py`)."""
    from dragoman.models.catalogue import DEFAULT_MODEL

    if setting != "host":
        return Choice(setting, "set explicitly")
    if model != DEFAULT_MODEL:
        return Choice("shipped", "the Q8_0 form is measured on the default model only")
    return Choice(
        "q8_0",
        "the shipped values as Q8_0: llama.cpp's x86 kernels read prompts ~1.2x and decode 16 "
        "streams ~1.2x faster than from the shipped Q5_0/Q4_K mix, one stream 0.92-0.99x "
        "(benchmarks/results/gguf-forms-*); --gguf-weights shipped runs the file as is",
    )


def gguf_form(settings: EngineSettings) -> GgufForm:
    """The GGUF form `settings` resolve to."""
    chosen = choose_gguf(settings.gguf_weights, settings.model).value
    return "q8_0" if chosen == "q8_0" else "shipped"


def plan_llamacpp(settings: EngineSettings, host: Host, tokenizer_dir: str) -> EnginePlan:
    threads = choose_threads(settings.cpu_threads, host)
    n = thread_count(threads.value, host)
    ctx = settings.max_num_seqs * settings.max_model_len
    per_token = kv_bytes_per_token(tokenizer_dir, "float16")  # llama.cpp's default KV type
    gib = f"{per_token * ctx / 2**30:.2f}" if per_token else "unknown"
    return EnginePlan(
        device="cpu",
        dtype=Choice("gguf", "the GGUF's own block types, computed by ggml"),
        threads=Choice(str(n), f"{threads.value}: {threads.reason}"),
        kvcache_gib=Choice(
            gib,
            f"f16 KV cache of {ctx} tokens: {settings.max_num_seqs} slots x "
            f"{settings.max_model_len} (max_num_seqs x max_model_len)",
        ),
        tcmalloc=Choice("", "llama.cpp: not used"),
        enforce_eager=Choice("n/a", "llama.cpp: no graph capture"),
        weights=choose_gguf(settings.gguf_weights, settings.model),
        engine=Choice("llama.cpp", "--architecture llama-cpp: a managed llama-server"),
    )


def gguf_file(settings: EngineSettings, model: str) -> Path | None:
    """Where the GGUF llama.cpp runs for catalogue `model` is (or will be made): named, never
    made here (a report must not assemble or re-encode a model). None: not in the catalogue."""
    from dragoman.models.catalogue import CATALOGUE
    from dragoman.models.gguf_forms import form_name

    entry = CATALOGUE.get(model)
    if entry is None:
        return None
    name = form_name(entry.gguf_name, gguf_form(settings), entry.sha256)
    return settings.data_dir / "models" / name


def info_plan(settings: EngineSettings) -> tuple[str, EnginePlan]:
    """(the GGUF it would run, the plan) for `dragoman info --architecture llama-cpp`."""
    from dragoman.models.prepare import model_dir

    path = gguf_file(settings, settings.model)
    gguf = "(no GGUF)"
    if path is not None:
        # as the vLLM row says "not prepared": the path alone read as if the file were there
        gguf = str(path) if path.is_file() else f"{path} (not made yet: `dragoman model prepare`)"
    try:
        server_launcher(settings)
    except DragomanError as exc:
        gguf += f" ({exc.message})"
    tokenizer_dir = str(model_dir(settings.data_dir, settings.model))
    return gguf, plan_llamacpp(settings, detect(), tokenizer_dir)


class LlamaCppTranslator:
    def __init__(
        self,
        client: httpx.AsyncClient,
        server: LlamaServerProcess,
        settings: EngineSettings,
        tokenizer: Any,
        languages: tuple[str, ...],
        prompt_format: PromptFormat = "chat",
        name: str | None = None,
        plan: EnginePlan | None = None,
        prefix_bank: bool = False,
        model_dir: str | None = None,
    ) -> None:
        self._client = client
        self._server = server
        self._settings = settings
        self._tokenizer = tokenizer
        self.model_name = name or settings.model
        self.languages = languages
        self.plans = {self.model_name: plan} if plan else {}
        self.prompts = PromptBuilder(
            tokenizer,
            settings.max_model_len,
            settings.output_ratio,
            settings.max_output_tokens,
            prompt_format,
        )
        self._running = 0
        self._slots = SlotPicker(settings.max_num_seqs)
        self._bank = PrefixBank(client, lambda pair: self.prompts.shared_prefix(*pair), prefix_bank)
        # Chat's root (what /v1/models reports and clients load a tokenizer from) and defaults.
        self._model_dir = model_dir or self.model_name
        self._chat_defaults = generation_defaults(model_dir) if model_dir else {}

    def num_unfinished_requests(self) -> int:
        return self._running

    def model_for(self, source: str, target: str) -> str:
        return self.model_name

    async def check_health(self) -> None:
        code = self._server.exit_code()
        if code is not None:
            raise EngineDead(f"llama-server exited ({code}); restart the server")
        try:
            # Its own connection: the pool may be full of translations waiting for a slot.
            async with httpx.AsyncClient(
                timeout=HEALTH_TIMEOUT_SECONDS, headers=self._server.headers
            ) as client:
                r = await client.get(f"{self._server.url}/health")
        except httpx.ConnectError as exc:
            raise EngineDead(f"llama-server does not accept connections: {exc}") from exc
        except httpx.TimeoutException:
            log.warning("llama-server's /health took over %g s", HEALTH_TIMEOUT_SECONDS)
            return  # slow is not dead; the next check decides
        if r.status_code != 200:
            raise EngineDead(f"llama-server's /health answered {r.status_code}: {r.text[:200]}")

    def payload(
        self,
        ids: list[int],
        max_tokens: int,
        slot: int | None = None,
        retry: bool = False,
        seed: int | None = None,
    ) -> dict[str, Any]:
        """A /completion request: dragoman's prompt as token ids (the GGUF's vocabulary is
        the tokenizer's), greedy (a `retry` sampled with a fixed seed, as on vLLM),
        dragoman's budget and penalty, in the slot `slot` names (engine/_llamacpp_slots.py).
        llama.cpp's penalty divides a
        seen token's logit as vLLM's does; its window is the slot's context so prompt and output
        count, as in vLLM. One answer, not a stream: `_generate` streams only an output's tail."""
        body: dict[str, Any] = {
            "prompt": ids,
            "n_predict": max_tokens,
            "temperature": RETRY_TEMPERATURE if retry else 0.0,
            "repeat_penalty": self._settings.repetition_penalty,
            "repeat_last_n": self._settings.max_model_len,
            "cache_prompt": True,  # the shared instruction prefix is not computed again
            "stream": False,
            "return_tokens": True,  # the guard reads token ids
        }
        if retry:  # as vLLM samples: the whole distribution, no top-k, top-p or min-p cut
            body.update(seed=0, top_k=0, top_p=1.0, min_p=0.0)
        elif seed is not None:  # a sampled candidate, as vLLM's
            body.update(SAMPLING, seed=seed, top_k=0)
        if slot is not None:
            body["id_slot"] = slot
        if self.prompts.stop:
            body["stop"] = self.prompts.stop
        return body

    def _guard(self, text: str, max_tokens: int) -> RepetitionGuard | None:
        """As VllmTranslator's: the source's own repetition gets two copies to spare."""
        window = self._settings.repeat_window
        if not window:
            return None
        return guard_for(text, window, max_tokens)

    def _failure(self, exc: Exception) -> DragomanError:
        code = self._server.exit_code()
        if code is not None:
            return EngineDead(f"llama-server exited ({code}); restart the server")
        return EngineFailed(f"translation failed in llama-server: {exc!r}")

    async def candidates(
        self, text: str, source: str, target: str, terms: Terms, k: int, patience: float | None
    ) -> list[Translation]:
        """The greedy reply and `k - 1` sampled ones (seeds 1..k-1), in slots of their own."""
        return await sampling.gather(
            lambda _: self.translate(text, source, target, terms),
            lambda seed: self.translate(text, source, target, terms, seed),
            k,
            patience,
            staged=False,
        )

    async def translate(
        self, text: str, source: str, target: str, terms: Terms = (), seed: int | None = None
    ) -> Translation:
        ids, max_tokens = self.prompts.build(text, source, target, terms)
        guard = self._guard(text, max_tokens)
        started = time.monotonic()
        self._running += 1
        pair = (source, target)
        try:
            # The pair's system prompt and examples lead the prompt: a slot that ran the pair
            # last holds them, any other gets them from the bank (engine/_llamacpp_slots.py).
            async with self._slots.hold(pair, ids) as slot:
                if self._slots.key_of(slot) != pair:
                    await self._bank.load(pair, slot)
                final, text_out, cut, slot_seconds = await self._generate(
                    self.payload(ids, max_tokens, slot, isinstance(text, Insisted), seed), guard
                )
        except (httpx.HTTPError, ValueError, KeyError) as exc:
            raise self._failure(exc) from exc
        finally:
            self._running -= 1
        wall = time.monotonic() - started
        tokens = guard.tokens if guard is not None else list(final.get("tokens") or [])
        finish: FinishReason
        if cut is not None:
            tokens = tokens[:cut]
            text_out = self._tokenizer.decode(tokens, skip_special_tokens=True)
            finish = "repetition"
        else:
            finish = "length" if final.get("stop_type") == "limit" else "stop"
        output_tokens = len(tokens) if tokens else int(final.get("tokens_predicted", 0))
        inference = wall
        if cut is None and slot_seconds is not None:  # its prompt and decode time in a slot
            inference = min(wall, slot_seconds)
        return Translation(
            text=clean_output(text_out, text),
            finish_reason=finish,
            input_tokens=len(ids),
            output_tokens=output_tokens,
            queue_seconds=wall - inference,
            inference_seconds=inference,
        )

    async def _generate(
        self, body: dict[str, Any], guard: RepetitionGuard | None
    ) -> tuple[dict[str, Any], str, int | None, float | None]:
        """(last answer, the output's text, guard's cut, seconds in llama.cpp's slot).

        The first UNSTREAMED_TOKENS tokens come as one answer and the guard reads them whole;
        only a longer output's tail is streamed, so the guard can stop a loop there as it comes.
        A stream wakes this process and llama-server's HTTP thread at every token: on a small
        CPU those wake-ups take time from llama.cpp's own threads (a token at one client ~7%
        slower, benchmarks/README.md), while most translations are shorter than that, and a
        loop in the first part costs at most that many tokens before the guard cuts it. The
        tail continues from the prompt and the tokens so far: the slot still holds them
        (cache_prompt), and greedy decoding with the same penalty window gives the same tokens
        (a sampled retry's tail is drawn afresh, from the same seed)."""
        budget = int(body["n_predict"])
        if guard is None:
            final = await self._answer(body)
            return final, final.get("content", ""), None, slot_seconds(final)
        head = await self._answer({**body, "n_predict": min(budget, UNSTREAMED_TOKENS)})
        seconds = slot_seconds(head)
        cut = guard.feed(head.get("tokens") or [])
        if cut is not None or head.get("stop_type") != "limit" or len(guard.tokens) >= budget:
            return head, head.get("content", ""), cut, seconds
        tail = {
            **body,
            "prompt": list(body["prompt"]) + guard.tokens,
            "n_predict": budget - len(guard.tokens),
            "stream": True,
        }
        final, cut = await self._stream(tail, guard)
        more = slot_seconds(final)
        total = None if seconds is None or more is None else seconds + more
        # The whole output's text from its tokens: the first answer may end inside a character.
        return final, self._tokenizer.decode(guard.tokens, skip_special_tokens=True), cut, total

    async def _answer(self, body: dict[str, Any]) -> dict[str, Any]:
        """One unstreamed answer. A cancelled task (its client left) closes the connection,
        and llama-server stops a slot whose client is gone."""
        r = await self._client.post("/completion", json=body)
        if r.status_code != 200:
            raise EngineFailed(f"llama-server answered {r.status_code}: {error_message(r)}")
        answer: dict[str, Any] = r.json()
        return answer

    async def _stream(
        self, body: dict[str, Any], guard: RepetitionGuard
    ) -> tuple[dict[str, Any], int | None]:
        """(last message, guard's cut) of a streamed answer, fed to the guard token by token.
        Leaving the `async with` closes the connection, and llama-server stops a slot whose
        client is gone: a cut output, or a cancelled task, frees the slot at once."""
        async with self._client.stream("POST", "/completion", json=body) as r:
            if r.status_code != 200:
                await r.aread()
                raise EngineFailed(f"llama-server answered {r.status_code}: {error_message(r)}")
            final: dict[str, Any] = {}
            async for msg in stream_messages(r):
                final = msg
                cut = guard.feed(msg.get("tokens") or [])
                if cut is not None:
                    return final, cut
                if msg.get("stop"):
                    break
            if not final.get("stop"):
                raise EngineFailed("llama-server's stream ended before the answer did")
            return final, None

    # -- chat (the OpenAI surface): the model's chat template, no translation prompt or guard --

    def chat_models(self) -> dict[str, str]:
        return {self.model_name: self._model_dir}

    async def chat(
        self, model: str, messages: list[dict[str, str]], params: ChatParams
    ) -> AsyncGenerator[ChatChunk, None]:
        ids = chat_prompt(self._tokenizer, messages, self._settings.max_model_len)
        yield ChatChunk("", len(ids))
        self._running += 1
        try:
            async with self._slots.hold(CHAT_SLOT, ids) as slot:
                body = chat_body(
                    ids, params, self._chat_defaults, self._settings.max_model_len, slot
                )
                async for chunk in stream_chat(self._client, body):
                    yield chunk
        except (httpx.HTTPError, ValueError, KeyError) as exc:
            raise self._failure(exc) from exc
        finally:
            self._running -= 1


@asynccontextmanager
async def open_llamacpp(
    settings: EngineSettings,
    languages: tuple[str, ...],
    prompt_format: PromptFormat = "chat",
    name: str | None = None,
) -> AsyncIterator[LlamaCppTranslator]:
    """Start llama-server on the model's GGUF, yield a translator over it, always stop it."""
    from transformers import AutoTokenizer

    from dragoman.models.prepare import gguf_path, resolve_model

    launcher = server_launcher(settings)
    gguf = gguf_path(settings.model, settings.data_dir, form=gguf_form(settings))
    tokenizer_dir = resolve_model(settings.model, settings.data_dir, "full")
    tokenizer = AutoTokenizer.from_pretrained(tokenizer_dir)
    host = detect()
    plan = plan_llamacpp(settings, host, tokenizer_dir)
    label = name or settings.model
    log.info("engine for %s on %s: %s", label, host.label(), plan.summary())
    port = free_port()
    prefixes = settings.data_dir / "slots" / f"llama-server-{port}"
    prefixes.mkdir(parents=True, exist_ok=True)
    cmd = command(
        launcher,
        gguf,
        port,
        alias=label,
        threads=int(plan.threads.value),
        slots=settings.max_num_seqs,
        max_model_len=settings.max_model_len,
        slot_save_path=prefixes,
    )
    server = LlamaServerProcess(cmd, settings.data_dir / "logs" / f"llama-server-{port}.log")
    started = time.monotonic()
    server.start()
    try:
        await server.wait_healthy(START_TIMEOUT_SECONDS)
        log.info(
            "llama.cpp server ready in %.1f s (%s, %s)",
            time.monotonic() - started,
            gguf,
            launcher_name(launcher),
        )
        async with slot_client(server.url, settings.max_num_seqs, server.headers) as c:
            yield LlamaCppTranslator(
                c,
                server,
                settings,
                tokenizer,
                languages,
                prompt_format,
                label,
                plan,
                prefix_bank=True,
                model_dir=str(tokenizer_dir),
            )
    finally:
        await server.stop()
        shutil.rmtree(prefixes, ignore_errors=True)
        if server.exit_code() in (0, -15):
            server.log_path.unlink(missing_ok=True)  # kept only when it failed
