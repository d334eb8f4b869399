"""`dragoman bench` and `dragoman tune`: what to measure, on which workload, and where the
results go."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

from pydantic import AfterValidator, Field, field_validator

from dragoman.service.settings import MAX_CANDIDATES
from dragoman.settings import EngineSettings, check_threads, comma_list


class BenchSettings(EngineSettings):
    url: str | None = None
    """Bench this running dragoman server instead of starting the architectures."""

    server_pid: int | None = None
    """PID of the server at --url, to sample its CPU (optional)."""

    architectures: list[str] = [
        "continuous",
        "multiprocess",
        "multiprocess-2",
        "static-batch",
        "vllm-serve",
    ]
    """Architectures to start and compare, one after another, same model and settings:
    continuous, multiprocess, multiprocess-2, static-batch (the baselines it replaces),
    continuous-fp32 / -bf16 (that dtype whatever the host), continuous-w8a8 / -w8a8-mixed /
    -w4a16 (the quantized forms), continuous-noguard (the repetition guard off),
    continuous-legacy (the engine defaults before they followed the host), llama-cpp (dragoman
    on a managed llama-server, the host's GGUF form), llama-cpp-shipped (the same on the GGUF
    as shipped), vllm-serve (vLLM's own OpenAI-compatible server, the peer), llama-server
    (llama.cpp's server on the model's GGUF, built for this CPU by scripts/build-llama-cpp, or
    --llama-server) and llama-server-wheel (the same server from the prebuilt xllamacpp wheel,
    an AVX2 build). `<architecture>@<model>` runs one on another model, so a quality tier and
    --model compare within one run (continuous@qwen2.5-coder-1.5b-instruct)."""

    llama_threads: int | None = Field(default=None, ge=1)
    """Threads of the llama-server peer (-t). Default: every CPU this process may use."""

    workload: Literal["uniform", "variable", "ui"] = "variable"
    """uniform: one sentence length; variable: 10-200 tokens mixed; ui: real UI strings."""

    workload_size: int = Field(default=400, ge=1)
    """Distinct texts in the workload (cycled if a level needs more)."""

    seed: int = 0
    """Seed of the workload and of Poisson arrivals."""

    concurrency: list[Annotated[int, Field(ge=1)]] = [1, 5, 10, 15, 20, 25]
    """Closed-loop concurrency levels (the seed's)."""

    rates: list[Annotated[float, Field(gt=0, allow_inf_nan=False)]] = []
    """Open-loop Poisson arrival rates (requests/s), after the closed-loop levels."""

    requests_per_level: int = Field(default=60, ge=1)
    """Most requests per level."""

    seconds_per_level: float = Field(default=60.0, gt=0)
    """Most seconds per level (requests in flight are still awaited)."""

    offline: bool = True
    """Measure the offline engine on the same prompts first, all at once and timed to the last
    answer (its drain included: a reference, not a ceiling); it loads the model on this machine.
    With --url only when asked: --offline."""

    offline_requests: int = Field(default=120, ge=1)
    """Prompts submitted at once for the offline batch."""

    out: Path = Path("benchmarks/results/latest")
    """Results folder: results.json, results.md, PNG plots, server logs."""

    label: str = ""
    """Free text naming the run (machine, purpose)."""

    guard_cost: bool = False
    """Measure the repetition guard's cost instead: one engine, guard on vs off, the same texts
    (--offline-requests of them) at once, rounds alternated."""

    documents: bool = False
    """Measure the documents targets instead: a 20-sentence document against its longest
    sentence alone, a cache hit, and segmentation + markup overhead for 10 KB."""

    surfaces: bool = False
    """Measure the compatible surfaces' targets instead: a LibreTranslate list against one by
    one and coalescing on the real engine, each adapter's overhead on the echo engine."""

    proxy: bool = False
    """Measure `dragoman route` instead: direct vs through the proxy, same backend and load."""

    proxy_backends: list[Literal["echo", "continuous"]] = ["echo", "continuous"]
    """Backends for --proxy and --ray: echo (no model: the path's own cost) and the real
    engine."""

    ray: bool = False
    """Measure the Ray Serve path instead: `dragoman serve` vs `dragoman deploy ray`, same
    load, on --proxy-backends: echo (0 and 50 ms a text) and the real engine (needs the `ray`
    extra)."""

    ray_layouts: list[Literal["split", "whole"]] = ["split"]
    """Layouts of the Ray app that --ray measures (`dragoman deploy ray --ray-layout`), each
    against the same direct server."""

    ray_ingress: Literal["haproxy", "proxy"] = "haproxy"
    """How HTTP reaches the Ray app that --ray measures (`dragoman deploy ray --ray-ingress`)."""

    overload: bool = False
    """Measure the overload targets instead: one real server, closed-loop clients up to its
    admission bound, then 4x the bound honouring Retry-After; --seconds-per-level a phase."""

    checks_cost: bool = False
    """Measure what keys, per-key limits and admission cost a request instead: two echo
    servers, checks on and off; --requests-per-level a round, rounds alternated."""

    hostile: bool = False
    """Measure crafted texts against the request path instead: every pattern on its worst
    text, the text work against plain text, and /health beside the largest admitted request
    (an echo server)."""

    files: bool = False
    """Measure a Word file against its text instead: one real server, a DOCX of
    --files-paragraphs paragraphs through DeepL's document API, as one list of texts, and
    one paragraph per request (the first --files-sequential)."""

    files_paragraphs: int = Field(default=1000, ge=1)
    """Paragraphs of the Word file --files translates (about 40 pages at 1,000)."""

    files_sequential: int = Field(default=100, ge=1)
    """Paragraphs --files sends one request at a time (scaled to the whole file)."""

    candidates_cost: bool = False
    """Measure what candidates cost instead: one server (its defaults, cache off), one client
    sending each of --candidates-texts texts greedy (`candidates: 1`), as the server chooses,
    with `quality: best` and with each of --candidates-ks candidates, in turns; then 16
    clients in blocks of --candidates-block requests, greedy and as the server chooses
    alternated, then one block of each of --candidates-ks."""

    candidates_texts: int = Field(default=12, ge=1)
    """Texts --candidates-cost sends one client, each once per mode (a multiple of the modes,
    3 + the --candidates-ks, gives each mode each place in the turns equally often)."""

    candidates_block: int = Field(default=64, ge=1)
    """Requests in each of --candidates-cost's 16-client blocks (two for greedy and for the
    server's choice, one for each of --candidates-ks)."""

    candidates_ks: list[Annotated[int, Field(ge=2, le=MAX_CANDIDATES)]] = [2, 4, 8]
    """Candidate counts --candidates-cost also forces (`candidates: N`, mode `kN`), for its
    per-k table only (no verdict): in the one client's turns and one 16-client block each.
    Empty (`[]`): greedy, the server's choice and best only."""

    soak: bool = False
    """Run a soak instead: a server (--soak-engine) under mixed traffic (successes, refusals,
    deadlines, clients leaving) for --soak-seconds, its memory and open descriptors sampled."""

    soak_seconds: float = Field(default=300.0, gt=0)
    """How long --soak sends traffic, after its warm-up."""

    soak_engine: Literal["echo", "continuous"] = "echo"
    """The server --soak runs: echo (no model: thousands of requests a minute through our own
    code) or continuous (the real engine on --model: its processes' memory and descriptors
    too, at the engine's pace)."""

    open_dashboard: bool = False
    """Open the dashboard (/dashboard) of each dragoman server under test in a browser; its
    address is printed either way."""

    @field_validator("candidates_ks")
    @classmethod
    def _distinct(cls, value: list[int]) -> list[int]:
        if len(set(value)) != len(value):
            raise ValueError(f"{value} names a candidate count twice")
        return value

    @field_validator("url")
    @classmethod
    def _http(cls, value: str | None) -> str | None:
        if value and not value.startswith(("http://", "https://")):
            raise ValueError(f"{value!r} must start with http:// or https://")
        return value.rstrip("/") if value else value


class TuneSettings(EngineSettings):
    workload: Literal["uniform", "variable", "ui"] = "variable"
    """Workload to tune on (use the one that looks like your traffic)."""

    # The lists are checked here, with serve's rules for one value: tune copies each choice
    # into the engine's settings without validation, so a bad one surfaced only when its
    # server failed to start, after the choices before it had run.
    dtypes: list[Literal["host", "bfloat16", "float16", "float32"]] = Field(
        default=["float32", "bfloat16"], min_length=1
    )
    """dtypes tried first (with every --threads choice, at --max-num-seqs); the best goes on."""

    threads: list[Annotated[str, AfterValidator(check_threads)]] = Field(
        default=["all", "reserve-one"], min_length=1
    )
    """CPU thread choices tried with every dtype (see --cpu-threads); ignored on a GPU."""

    workload_size: int = Field(default=400, ge=1)
    """Distinct texts in the workload."""

    seed: int = 0
    """Workload seed."""

    seqs: list[Annotated[int, Field(ge=1, le=1024)]] = Field(
        default=[1, 2, 4, 8, 16, 32], min_length=1
    )
    """max_num_seqs values, tried in order until results degrade."""

    batched_tokens: list[Annotated[int, Field(ge=256)]] = Field(default=[8192], min_length=1)
    """max_num_batched_tokens choices; each gets its own max_num_seqs sweep."""

    concurrency: list[Annotated[int, Field(ge=1)]] = [5, 20]
    """Concurrency profile (clients); the last level decides. The seed saw 2-20, peak 20."""

    requests_per_level: int = Field(default=40, ge=1)
    """Most requests per level."""

    seconds_per_level: float = Field(default=60.0, gt=0)
    """Most seconds per level."""

    tolerance: float = Field(default=0.05, gt=0, lt=1)
    """Relative change that counts: gains under it do not pay for worse latency."""

    out: Path = Path("benchmarks/results/tune")
    """Results folder: tune.json, tune.md, tuned.toml (load it with `dragoman serve --config
    tuned.toml`), server logs."""

    @field_validator("dtypes", "threads", mode="before")
    @classmethod
    def _split(cls, value: object) -> object:
        return comma_list(value)
