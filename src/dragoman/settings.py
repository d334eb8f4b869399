"""One typed settings object per command, built once at the edge (cli.py) and passed down.

Every field is a CLI flag (`--max-num-seqs`) and a `DRAGOMAN_` environment variable
(`DRAGOMAN_MAX_NUM_SEQS`); a TOML file named by `DRAGOMAN_CONFIG` (or `--config`) supplies
defaults below both. Precedence: flag > environment > config file > default.
"""

from __future__ import annotations

import difflib
import os
import re
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    SecretStr,
    field_validator,
    model_validator,
)
from pydantic.fields import FieldInfo
from pydantic_settings import (
    BaseSettings,
    CliPositionalArg,
    CliSuppress,
    EnvSettingsSource,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    SettingsError,
    TomlConfigSettingsSource,
)

from dragoman.engine.protocol import ContextMode, Quality
from dragoman.models.catalogue import DEFAULT_MODEL


def _comma_list(value: object) -> object:
    """ "en, fr,de" -> ["en", "fr", "de"] for list settings given as one flag or variable."""
    return [v.strip() for v in value.split(",") if v.strip()] if isinstance(value, str) else value


def _default_data_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "dragoman"


class _Env(EnvSettingsSource):
    """`DRAGOMAN_` variables. A list setting is read as JSON, or else as comma-separated
    items (`DRAGOMAN_LANGUAGES=en,fr` as `--languages en,fr` reads)."""

    def decode_complex_value(self, field_name: str, field: FieldInfo, value: object) -> object:
        try:
            decoded = super().decode_complex_value(field_name, field, value)
        except ValueError:
            return _comma_list(value)
        if isinstance(decoded, int | float | str) and not isinstance(decoded, bool):
            return _comma_list(value)  # one item given alone: DRAGOMAN_CONCURRENCY=5
        return decoded


def _toml(settings_cls: type[BaseSettings], config: str) -> TomlConfigSettingsSource:
    """The config file's source; a file that is missing or not TOML, or a key no command
    has (a typo), is a SettingsError naming it."""
    if not Path(config).is_file():
        raise SettingsError(f"config file {config}: no such file")
    try:
        source = TomlConfigSettingsSource(settings_cls, toml_file=config)
    except (OSError, ValueError) as exc:  # tomllib.TOMLDecodeError is a ValueError
        raise SettingsError(f"config file {config}: {exc}") from None
    known = known_setting_names()
    unknown = sorted(set(source.toml_data) - known)
    if unknown:
        hints = []
        for key in unknown:
            close = difflib.get_close_matches(key, known, n=1)
            hints.append(f"{key!r}" + (f" (did you mean {close[0]!r}?)" if close else ""))
        raise SettingsError(f"config file {config}: unknown settings: {', '.join(hints)}")
    return source


# Every settings class, recorded as it is defined (`_Base.__pydantic_init_subclass__`): the
# config file's keys are checked against all of them, since one file may serve several
# commands. A class is known once its module is imported: `dragoman.all_settings.load_all()`
# imports every command's before a config file is read (the CLI and Ray's builder call it).
_registered: list[type[BaseSettings]] = []


def known_setting_names() -> set[str]:
    """Every setting (and alias) of every settings class defined so far."""
    names: set[str] = set()
    for cls in _registered:
        for name, field in cls.model_fields.items():
            names.add(name)
            if isinstance(field.alias, str):
                names.add(field.alias)
    return names


class _Base(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="DRAGOMAN_",
        use_attribute_docstrings=True,
        cli_kebab_case=True,
        cli_implicit_flags=True,
        extra="ignore",
        validate_default=True,
    )

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        _registered.append(cls)

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        sources: list[PydanticBaseSettingsSource] = [init_settings, _Env(settings_cls)]
        config = os.environ.get("DRAGOMAN_CONFIG")
        if config:
            sources.append(_toml(settings_cls, config))
        return tuple(sources)


class MetricsKeyed(_Base):
    """The key that guards a server's or the proxy's view of itself."""

    metrics_key: SecretStr | None = None
    """When set, /metrics, /v1/info and /v1/stats (the dashboard's feed) need
    `Authorization: Bearer <this key>`, and on the proxy /v1/backends too (prefer the
    DRAGOMAN_METRICS_KEY environment variable to the flag); empty: none, as for the other
    keys. Unset on a server with API keys on, they take any valid API key."""

    @field_validator("metrics_key", mode="before")
    @classmethod
    def _no_empty_key(cls, value: object) -> object:
        return None if value == "" else value


class HostChecked(_Base):
    """The Host names a server or the proxy answers."""

    allowed_hosts: list[str] = []
    """Host names (the request's Host header, any port) answered, comma separated; any other
    gets 400 `host_not_allowed`, so a web page whose name was made to resolve to this address
    (DNS rebinding) reaches nothing, whatever CORS allows. `*.example.com` allows its
    subdomains, `*` any host. Empty (the default): `localhost`, `127.0.0.1`, `[::1]` (and
    --host itself) when --host is a loopback address (as by default), any host otherwise."""

    @field_validator("allowed_hosts", mode="before")
    @classmethod
    def _split_hosts(cls, value: object) -> object:
        return _comma_list(value)

    @field_validator("allowed_hosts")
    @classmethod
    def _check_hosts(cls, value: list[str]) -> list[str]:
        if not value:
            return value
        from dragoman.api.hosts import check_pattern  # the web stack: only when one is given

        return [check_pattern(host) for host in value]


class ModelSettings(_Base):
    model: str = DEFAULT_MODEL
    """Model to serve: a catalogue name (see `dragoman model list`), a local Hugging Face model
    directory, or a hub id (only where the machine has internet)."""

    data_dir: Path = Field(default_factory=_default_data_dir)
    """Where prepared models are cached (and, by default, DeepL's stored glossaries and
    scripts/build-llama-cpp's build); default: $XDG_CACHE_HOME/dragoman, else
    ~/.cache/dragoman."""

    @field_validator("data_dir")
    @classmethod
    def _data_dir(cls, value: Path) -> Path:
        # `~` comes unexpanded from a systemd unit or a config file (a folder named `~` was
        # made in the working directory), and a relative folder is read by engine processes
        # and logs that need not share it: the one folder, spelled absolute, everywhere.
        return value.expanduser().absolute()

    weights: Literal["host", "full", "w8a8", "w4a16"] = "host"
    """Which form of a catalogue model's weights the engine loads: `full` (the GGUF dequantized
    to safetensors; run at `dtype`), `w8a8` (int8 weights and int8 activations per token,
    re-quantized from the GGUF) or `w4a16` (4-bit weight groups, bf16 activations). `host`:
    the engine plan's choice for this machine (`dragoman info` shows it and why; full on a GPU
    and for models outside the catalogue). `dragoman model prepare` makes the form this
    resolves to."""


class PrepareSettings(ModelSettings):
    verify: bool = False
    """Hash every prepared file of --model again (each weights form, the GGUF files) against
    the digest recorded when it was made, and say which are bad (exit 1); start-up checks
    sizes only. Nothing is made."""

    force: bool = False
    """Remove every prepared file of --model first, then prepare it as without the flag: a
    file --verify calls bad, or one prepared by an older version (no digests), made again.
    Stop the servers that use the model first; without the model's packages, nothing is
    removed."""


LLAMA_CPP_PYTHON_VERSION = "0.3.36"


class LlamaCppSettings(ModelSettings):
    llama_cpp_version: str = LLAMA_CPP_PYTHON_VERSION
    """Version of the llama-cpp-python source distribution whose vendored llama.cpp is built."""

    build_jobs: int = Field(default=2, ge=1)
    """Parallel compile jobs."""


def _check_threads(value: str) -> str:
    """A --cpu-threads value (tune's --threads choices take the same)."""
    if value in ("host", "all", "reserve-one", "auto", "nobind"):
        return value
    if not re.fullmatch(r"\d+(-\d+)?(,\d+(-\d+)?)*", value):
        raise ValueError("cpu_threads: host, all, reserve-one, nobind or a CPU list such as 0-1")
    return value


class EngineSettings(ModelSettings):
    # The seed measured 2-20 concurrent requests per server; 16 sequences kept decode fast with
    # the best tail latency, while 64 left slots empty and slowed every step.
    max_num_seqs: int = Field(default=16, ge=1, le=1024)
    """Most sequences the engine decodes in one step (continuous-batching width)."""

    max_num_batched_tokens: int = Field(default=8192, ge=256)
    """Token budget of one engine step (prefill chunks plus decodes); the seed's tuned value."""

    block_size: int | None = Field(default=None, ge=16, multiple_of=16)
    """Tokens per KV cache block, the unit in which prompts share a cached prefix (a pair's
    system prompt and examples); none: vLLM's default for the device (128 on CPU, 16 on GPU).
    vLLM's CPU attention takes multiples of 32."""

    gpu_memory_utilization: float = Field(default=0.3, gt=0.0, le=1.0)
    """Share of accelerator memory for weights and KV cache (GPU only; the seed's 0.3 left room
    for other models on the same card)."""

    max_model_len: int = Field(default=2048, ge=128)
    """Longest prompt plus output, in tokens, of one engine request (a text, or a sentence of a
    cut-up one): the output budget shrinks to what fits, and a piece whose prompt leaves under
    16 tokens for it is refused with 413 `text_too_long`."""

    dtype: Literal["host", "auto", "bfloat16", "float16", "float32"] = "host"
    """Weights and activations dtype. `host`: bfloat16 on a GPU or a CPU with native bf16
    (AVX-512 BF16, AMX), else float32 (emulated bf16 is ~8x slower at batch 16)."""

    cpu_threads: str = "host"
    """CPU engine's OpenMP threads (VLLM_CPU_OMP_THREADS_BIND): `all` usable CPUs,
    `reserve-one` (vLLM's default, also spelt `auto`: one core left to the front end), a CPU
    list such as `0-1`, `nobind` (threads not pinned to CPUs), or `host`: every core on hosts
    of up to 4 CPUs (measured faster there), else reserve-one."""

    cpu_kvcache_space_gib: int | None = Field(default=None, ge=1)
    """KV-cache size in GiB on a CPU engine (VLLM_CPU_KVCACHE_SPACE). Default: what
    max_num_seqs full-length sequences need, twice over, at least 2, at most a quarter of free
    memory."""

    tcmalloc: bool | None = None
    """Preload libtcmalloc into the CPU engine (vLLM allocates faster with it). Default: when
    installed (Debian: libtcmalloc-minimal4)."""

    enforce_eager: bool | None = None
    """Skip graph capture/compilation. Default: on for CPU (start-up 40 s instead of 90 s),
    off for GPU (CUDA graphs speed up decode)."""

    llama_server: Path | None = None
    """llama.cpp's llama-server binary, for `--architecture llama-cpp` and the bench's
    llama-server peer. Default: the xllamacpp wheel's server, else the one
    scripts/build-llama-cpp built under the data directory."""

    gguf_weights: Literal["host", "shipped", "q8_0"] = "host"
    """The GGUF llama.cpp runs (`--architecture llama-cpp`): `shipped` (the catalogue's file as
    it is), `q8_0` (its layers re-encoded as Q8_0, the same values, which llama.cpp's x86
    kernels run faster for prompts and many streams; made once beside it) or `host`: the
    engine plan's choice (`dragoman info` says which): q8_0 for the default model, where it
    was measured; shipped for the others."""

    @field_validator("cpu_threads")
    @classmethod
    def _threads(cls, value: str) -> str:
        return _check_threads(value)

    @model_validator(mode="after")
    def _w4a16_activations(self) -> EngineSettings:
        # vLLM's 4-bit CPU kernel (cpu_gemm_wna16) has no float32 path.
        if self.weights == "w4a16" and self.dtype == "float32":
            raise ValueError("weights w4a16 runs with bfloat16 or float16 activations")
        return self

    max_output_tokens: int = Field(default=512, ge=8)
    """Hard cap on tokens generated for one text."""

    output_ratio: float = Field(default=3.0, gt=0.0)
    """Output budget per input token: max_tokens = min(cap, ratio * input + 16). Bounds the
    damage of a decoding loop."""

    repetition_penalty: float = Field(default=1.05, ge=1.0, le=2.0)
    """Penalty on already-generated tokens; with greedy decoding a small one breaks loops."""

    repeat_window: int = Field(default=16, ge=0)
    """Stop a translation whose output ends in one unit of any length (a token, a word, a clause,
    a whole sentence or line: up to 256 tokens) repeated back to back, 3+ copies, over at least
    this many tokens; the repeats are cut and finish_reason is "repetition". Repetition the
    source itself has gets two copies more. 0 disables the guard."""


class ModelSpec(BaseModel):
    """One model of a multi-model server (`[[models]]` in the config file)."""

    model_config = ConfigDict(extra="forbid")  # a misspelt key is an error, not a default

    name: str
    """Name it is served under (in answers, logs and metrics)."""

    model: str
    """Catalogue name or local Hugging Face model directory."""

    prompt: Literal["chat", "few-shot"] | None = None
    """Prompt format; default: the catalogue's entry, else chat."""

    languages: list[str] = []
    """Translate between any two of these (ISO 639-1)."""

    pairs: list[str] = []
    """Or exactly these pairs ("en-fr")."""

    tier: Quality | None = None
    """Quality tier: two entries may serve a pair in different tiers, and a request's `quality`
    hint picks one. Default: the catalogue's tier for the model, else fast."""

    default_for: list[str] = []
    """Pairs ("en-ko", or "*" for all of its pairs) this entry translates when a request gives
    no hint and another tier serves them too. Default: the catalogue's measured choice."""

    @field_validator("name")
    @classmethod
    def _check_name(cls, value: str) -> str:
        # The name is what clients send as `model` and read back in answers: an empty one
        # could not be asked for, and " qwen" would look like "qwen" while differing from it.
        if not value.strip():
            raise ValueError("a model's name must not be empty")
        if value != value.strip():
            raise ValueError(f"model name {value!r} must not begin or end with whitespace")
        return value

    def quality_tier(self) -> Quality:
        from dragoman.models.catalogue import tier_of

        return self.tier or tier_of(self.model)

    def prompt_format(self) -> Literal["chat", "few-shot"]:
        from dragoman.models.catalogue import CATALOGUE

        if self.prompt:
            return self.prompt
        entry = CATALOGUE.get(self.model)
        return entry.prompt if entry else "chat"

    def pair_list(self) -> list[tuple[str, str]]:
        from dragoman.engine.prompts import FEW_SHOT
        from dragoman.languages import NAMES, pairs_from_languages, parse_pair
        from dragoman.models.catalogue import CATALOGUE

        if bool(self.languages) == bool(self.pairs):
            raise ValueError(f"model {self.name!r}: give exactly one of languages or pairs")
        try:
            pairs = sorted(pairs_from_languages(self.languages)) + [
                parse_pair(p) for p in self.pairs
            ]
        except ValueError as exc:
            raise ValueError(f"model {self.name!r}: {exc}") from None
        entry = CATALOGUE.get(self.model)
        for code in {c for pair in pairs for c in pair}:
            if code not in NAMES:
                raise ValueError(f"model {self.name!r}: unknown language code {code!r}")
            if entry and code not in entry.languages:
                raise ValueError(f"model {self.name!r}: {self.model} does not serve {code!r}")
            if self.prompt_format() == "few-shot" and code not in FEW_SHOT:
                raise ValueError(f"model {self.name!r}: no few-shot examples for {code!r}")
        return pairs


class ServeSettings(EngineSettings, MetricsKeyed, HostChecked):
    host: str = "127.0.0.1"
    """Address to bind."""

    port: int = Field(default=8000, ge=0, le=65535)
    """Port to bind."""

    max_items: int = Field(default=64, ge=1)
    """Most texts in one list request."""

    max_text_chars: int = Field(default=100_000, ge=1)
    """Longest text accepted (longer: 413). Texts are cut into sentences, each its own engine
    request, so a text may be far longer than the model's context."""

    max_unit_chars: int = Field(default=300, ge=20)
    """Longest piece of a text sent as one engine request, a placeholder other than code
    counted as the token the model gets (`{1}`): longer sentences are cut at a clause mark or
    a space (never refused for their length)."""

    min_split_chars: int = Field(default=200, ge=0)
    """Texts up to this long with no newline are translated whole; longer ones sentence by
    sentence, concurrently."""

    sentence_context: ContextMode = "off"
    """Show each sentence of a cut-up text its neighbours as context, not to translate:
    previous (the sentence before), both (and the one after), off. A request's `context`
    overrides it (native /v1/translate). Measured: benchmarks/README.md, "Neighbour context"."""

    retry_invalid: bool = True
    """Check each reply (placeholders and inline tags each kept once, the target language, a
    sane length) and ask once more, with a reinforced instruction, when it fails; the better
    reply is kept. Measured: benchmarks/README.md, "Reply validation"."""

    cache_mib: int = Field(default=64, ge=0)
    """Memory for the translation cache of finished sentences (0: off)."""

    glossary_dir: Path | None = None
    """Where DeepL's stored glossaries (`/v2/glossaries`) are kept, a file each (default:
    DATA_DIR/glossaries): they outlive a restart, and the servers given the same directory
    (one machine's, or a shared volume) share them."""

    glossary_url: str | None = None
    """A Redis-protocol server (Valkey, Redis) to keep DeepL's stored glossaries in, instead of
    --glossary-dir, e.g. `redis://127.0.0.1:6379/0` (with a password, prefer
    DRAGOMAN_GLOSSARY_URL to the flag): every server given the same store shares them, no
    shared volume needed. May be the --cache-url server (the keys are apart); the store must
    keep them: persistence on, and no `allkeys-*` eviction policy. Off by default. A store
    that is down answers glossary requests 503 within 1 s; other translations never ask it."""

    cache_url: str | None = None
    """A Redis-protocol server (Valkey, Redis) as the translation cache's shared second level,
    e.g. `redis://127.0.0.1:6379/0` (with a password, prefer DRAGOMAN_CACHE_URL to the flag):
    read on a local miss, written after each translation, shared by every server given the
    same URL. Off by default. A store that is down or slow never fails a translation: a call
    waits at most 0.25 s, then the store is left alone for 5 s."""

    cache_ttl: int = Field(default=7 * 86400, ge=1)
    """Seconds a translation stays in the shared store (--cache-url)."""

    architecture: Literal[
        "host", "continuous", "llama-cpp", "multiprocess", "static-batch", "echo"
    ] = "host"
    """Request path. `host` picks the engine for this machine (logged with its reason; see
    `dragoman info`): `continuous` on a GPU or a CPU with native bf16, `llama-cpp` on CPUs
    without it. `continuous` is dragoman on vLLM. `llama-cpp` is dragoman on a managed llama.cpp
    server running the catalogue model's GGUF (`gguf_weights`; lowest single-stream latency on
    a CPU; the xllamacpp wheel, or a scripts/build-llama-cpp build). `multiprocess` and
    `static-batch` are the seed's old architectures, kept only as benchmark baselines; `echo`
    returns the text unchanged (HTTP and proxy overhead measurements, routing tests). Deploy
    `continuous` or `llama-cpp`."""

    echo_delay: float = Field(default=0.0, ge=0)
    """Seconds the echo architecture waits before answering."""

    languages: list[str] = []
    """Serve only these languages (ISO 639-1, comma separated); default: all the model knows."""

    models: list[ModelSpec] = []
    """Several models in this server (config file `[[models]]`: name, model, prompt, languages
    or pairs, tier, default_for); each gets its own engine. Empty: one model, `--model`."""

    workers: int = Field(default=1, ge=1, le=8)
    """Worker processes (each with its own model copy) for the baseline architectures."""

    log_level: Literal["debug", "info", "warning", "error"] = "info"
    """Log level of the server."""

    log_format: Literal["text", "json"] = "text"
    """Log lines: `text`, or `json` (one JSON object a line on stderr: time, level, logger,
    message, request_id, exc_info; the access line's method, path, status, seconds), also for
    the engine's processes."""

    # -- operations: admission, deadlines, limits, keys, lifecycle ------------------------

    max_admitted: int | None = Field(default=None, ge=0)
    """Most texts admitted at once (in the engine plus waiting for it); past it new requests
    get 429 `overloaded` with Retry-After. Default: 4 x max_num_seqs (the engine runs
    max_num_seqs; three more batches waiting keep it full between a completion and the next
    request, and bound the queue to about three batch times), at least max_items so a full list
    fits. 0: no bound."""

    request_timeout: float = Field(default=300.0, gt=0)
    """Deadline of a request in seconds (504 `deadline_exceeded` when it passes, its engine
    requests aborted); the most a client may ask for with X-Request-Timeout or `timeout`."""

    drain_seconds: float = Field(default=30.0, ge=0)
    """On SIGTERM: readiness fails and new requests get 503 `draining`; admitted requests get
    this long to finish before the server exits (0 at once)."""

    max_body_bytes: int = Field(default=4 * 1024 * 1024, ge=1024)
    """Largest request body (413 `body_too_large`), checked on Content-Length and as the body
    arrives, before parsing. A text at `max_text_chars` is at most 400 KB of UTF-8; this bounds
    a whole list."""

    max_header_bytes: int = Field(default=16 * 1024, ge=1024)
    """Largest request head: 431 `headers_too_large` past it. The h11 parser (--http h11)
    also stops reading there; httptools (the default, faster) reads the head whole first."""

    max_json_depth: int = Field(default=32, ge=2)
    """Deepest JSON nesting accepted (400 `json_too_deep`), checked before parsing."""

    body_timeout: float = Field(default=30.0, gt=0)
    """Seconds a client may take to send its request body (408 `body_timeout`): a slow drip
    of bytes does not hold a connection forever."""

    keep_alive_seconds: int = Field(default=30, ge=1)
    """Idle keep-alive connections close after this long. Longer than the 5 s that HTTP
    clients' pools (httpx, the router's) keep idle connections, so a server never closes one
    that a client is about to reuse."""

    http: Literal["auto", "httptools", "h11"] = "auto"
    """HTTP/1.1 parser: auto (httptools when installed, the faster) or h11 (bounds the request
    head while reading it: see --max-header-bytes)."""

    gc_freeze: bool = True
    """Once the engine is up, move everything alive (modules, the tokenizer, the detector)
    out of Python's garbage collector's sight (gc.freeze): its full collections then scan
    what requests allocate, not the ~400,000 objects the engine's imports leave (a full
    collection of those held every request still for ~0.3 s; dragoman_gc_pause_seconds
    shows them); and raise its thresholds (5000, 10, 100), so a full collection waits for
    millions of allocations: a huge request's plan was walked by 16-17 of them."""

    api_keys_file: Path | None = None
    """File of API keys, one `<sha256 hex digest> [name]` a line (`dragoman keys add NAME`
    writes one). When this or DRAGOMAN_API_KEYS is set, every translation surface needs a key
    in its own convention (native and OpenAI `Authorization: Bearer`, DeepL
    `Authorization: DeepL-Auth-Key`, LibreTranslate `api_key`), and so do /metrics, /v1/info
    and /v1/stats unless --metrics-key is set; the probes, the pages and the language lists
    stay open. Re-read when it changes."""

    api_keys: CliSuppress[SecretStr | None] = None
    """Raw API keys, comma separated, hashed at load: environment DRAGOMAN_API_KEYS only (a
    command line shows in `ps`)."""

    key_requests_per_minute: int = Field(default=0, ge=0)
    """Requests one API key may send in any minute (429 `rate_limited`); 0: no limit."""

    key_chars_per_minute: int = Field(default=0, ge=0)
    """Characters one API key may send in any minute (429 `rate_limited`); 0: no limit."""

    key_chars_per_day: int = Field(default=0, ge=0)
    """Characters one API key may send in a UTC day (429 `quota_exceeded`, 456 on DeepL's
    surface; DeepL's /v2/usage reports it); 0: no limit. Counted in memory: a restart resets it."""

    cors_origins: str = "*"
    """Access-Control-Allow-Origin for browser clients (LibreTranslate's web clients need it);
    empty: no CORS headers."""

    engine_check_interval: float = Field(default=5.0, gt=0)
    """Seconds between checks that the engine is alive, with or without traffic: a dead engine
    fails /health and stops the server with a non-zero exit."""

    @field_validator("languages", mode="before")
    @classmethod
    def _split_languages(cls, value: object) -> object:
        return _comma_list(value)

    @field_validator("cache_url", "glossary_url")
    @classmethod
    def _check_store_url(cls, value: str | None) -> str | None:
        if not value:
            return None
        if not re.match(r"(redis|rediss|unix)://", value):
            raise ValueError("must be a redis://, rediss:// or unix:// URL")
        return value

    @model_validator(mode="after")
    def _check(self) -> ServeSettings:
        if self.max_num_batched_tokens < self.max_num_seqs:
            raise ValueError("max_num_batched_tokens must be >= max_num_seqs")
        if self.max_admitted and self.max_admitted < self.max_items:
            raise ValueError(
                f"max_admitted ({self.max_admitted}) must be at least max_items "
                f"({self.max_items}), or 0 for no bound: a full list could never be admitted"
            )
        if self.models and self.languages:
            # --languages limits the one --model; each entry names its own languages, and
            # cutting those to a global list could leave an entry (an engine) serving nothing
            # or a `default_for` naming a pair gone: refused rather than silently ignored.
            raise ValueError(
                "--languages (DRAGOMAN_LANGUAGES) does not apply to a server with [[models]]: "
                "limit each [[models]] entry's languages or pairs instead"
            )
        if self.models:
            self.model_routes()  # checks the tiers and the defaults too
        if self.glossary_url and self.glossary_dir:
            raise ValueError(
                "--glossary-dir and --glossary-url both name where stored glossaries are kept: "
                "give one"
            )
        return self

    def admission_limit(self) -> int:
        """--max-admitted, or its default: 4 x max_num_seqs, at least max_items."""
        if self.max_admitted is not None:
            return self.max_admitted
        return max(4 * self.max_num_seqs, self.max_items)

    def engine_capacity(self) -> int:
        """Sequences the engines decode at once (each model has its own engine)."""
        return self.max_num_seqs * max(1, len(self.models))

    def model_routes(self) -> dict[tuple[str, str], str]:
        """Pair -> the model that translates it without a quality hint."""
        from dragoman.models.tiers import default_routes

        return default_routes(self.models)

    def model_tiers(self) -> dict[tuple[str, str], dict[Quality, str]]:
        """Pair -> tier -> model name; refuses duplicate names and a pair claimed twice in
        one tier."""
        from dragoman.models.tiers import tier_routes

        return tier_routes(self.models)


class TranslateSettings(EngineSettings):
    text: CliPositionalArg[str]
    """Text to translate ('-' reads standard input)."""

    to: str = "fr"
    """Target language (ISO 639-1)."""

    source: str = "en"
    """Source language (ISO 639-1), or `auto`: detected."""

    server: str = "http://127.0.0.1:8000"
    """A running dragoman server to ask; when none answers there, the engine is started here."""

    api_key: SecretStr | None = None
    """The key to send the server (`Authorization: Bearer`) when its keys are on; prefer the
    DRAGOMAN_API_KEY environment variable to the flag."""

    architecture: Literal[
        "host", "continuous", "llama-cpp", "multiprocess", "static-batch", "echo"
    ] = "host"
    """The engine started here when no server answers: the host's choice (as `serve`'s), vLLM
    (`continuous`) or llama.cpp (`llama-cpp`). Serve's other values are taken (a config file
    or DRAGOMAN_ARCHITECTURE shared with `serve` must not fail a translation by a server) and
    refused only when the engine would start here."""

    log_format: Literal["text", "json"] = "text"
    """Log lines of an engine started here: `text`, or `json` (one JSON object a line on
    stderr, the engine's processes' too), as on `dragoman serve`; the translation itself is
    printed on stdout either way."""


class InfoSettings(EngineSettings):
    # The flag is --json, but a field named `json` would shadow BaseModel.json: an alias, which
    # pydantic-settings reads from the environment unprefixed (a stray JSON=1) unless told.
    model_config = SettingsConfigDict(env_prefix_target="all")

    architecture: Literal["host", "continuous", "llama-cpp"] = "host"
    """The engine to report the plan of: the host's choice, vLLM (`continuous`) or llama.cpp
    (`llama-cpp`)."""

    json_output: bool = Field(default=False, alias="json")
    """Print the report as JSON (the same document as a server's GET /v1/info)."""


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
    continuous, multiprocess, multiprocess-2, static-batch (the seed's baselines),
    continuous-fp32 / -bf16 (that dtype whatever the host), continuous-w8a8 / -w4a16 (the
    quantized forms), continuous-noguard (the repetition guard off), continuous-legacy (the
    engine defaults before they followed the host), llama-cpp
    (dragoman on a managed llama-server, the host's GGUF form), llama-cpp-shipped (the same
    on the GGUF as shipped), vllm-serve (vLLM's own OpenAI-compatible server, the
    peer) and llama-server (llama.cpp's server on the model's GGUF; build it with
    scripts/build-llama-cpp). `<architecture>@<model>` runs one on another model, so a
    quality tier and --model compare within one run (continuous@qwen2.5-coder-1.5b-instruct)."""

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

    threads: list[Annotated[str, AfterValidator(_check_threads)]] = Field(
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
        return _comma_list(value)


class EvalSettings(_Base):
    url: str
    """Base URL of the server to evaluate (dragoman, `dragoman route`, or any OpenAI-compatible
    server with --api openai)."""

    api: Literal["native", "openai"] = "native"
    """native: POST /v1/translate; openai: POST /v1/chat/completions with a plain "Translate
    ... Output only the translation." prompt at temperature 0."""

    pairs: list[str] = ["en-fr", "en-de", "en-es", "en-ko", "en-zh", "en-ja"]
    """Language pairs (comma separated, "en-fr")."""

    kinds: list[Literal["ui", "sentence", "paragraph"]] = ["ui", "sentence", "paragraph"]
    """Input kinds: ui (catalogue strings of 2-7 words), sentence (8-40 words), paragraph
    (2-6 Bible verses, 60-130 words)."""

    per_pair: int = Field(default=20, ge=1)
    """Texts per pair and kind."""

    seed: int = 0
    """Seed of the set: the same seed picks the same texts."""

    concurrency: int = Field(default=8, ge=1)
    """Requests in flight at once (one text each)."""

    timeout: float = Field(default=600.0, gt=0)
    """Seconds one request may take."""

    openai_model: str | None = None
    """Model name for --api openai; default: the first of the server's /v1/models."""

    max_tokens: int = Field(default=512, ge=1)
    """max_tokens of each chat completion (--api openai); dragoman's own output cap."""

    api_key: SecretStr | None = None
    """Bearer key for a server with keys on (prefer DRAGOMAN_API_KEY to the flag)."""

    server_flags: str = ""
    """How the server was started, recorded in the results (a server does not report it)."""

    out: Path = Path("benchmarks/results/eval-latest")
    """Results folder: eval.json (settings, host, rows, every text and output) and eval.md."""

    label: str = ""
    """Free text naming the run (server, host, purpose)."""

    @field_validator("pairs", "kinds", mode="before")
    @classmethod
    def _split(cls, value: object) -> object:
        return _comma_list(value)

    @field_validator("pairs")
    @classmethod
    def _pairs(cls, value: list[str]) -> list[str]:
        from dragoman.languages import NAMES, parse_pair

        pairs = [parse_pair(p) for p in value]
        for a, b in pairs:
            if a == b or a not in NAMES or b not in NAMES:
                raise ValueError(f"pair {a}-{b}: two different codes of {', '.join(NAMES)}")
        # Once each: en-fr,EN-FR sent every text twice and counted it twice.
        return list(dict.fromkeys(f"{a}-{b}" for a, b in pairs))

    @field_validator("kinds")
    @classmethod
    def _kinds(cls, value: list[str]) -> list[str]:
        return list(dict.fromkeys(value))

    @field_validator("url")
    @classmethod
    def _url(cls, value: str) -> str:
        import httpx

        try:
            url = httpx.URL(value)
        except httpx.InvalidURL as exc:
            raise ValueError(f"url {value!r}: {exc}") from None
        if url.scheme not in ("http", "https") or not url.host:
            raise ValueError(f"url {value!r}: give http://HOST[:PORT] or https://...")
        return value


class BackendSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")

    url: str
    """Base URL of a dragoman server, e.g. http://127.0.0.1:8001."""

    name: str = ""
    """Label in metrics and logs (default b0, b1, ...)."""

    pairs: list[str] = []
    """Pairs it serves ("en-fr"); empty: learned from its /v1/languages."""

    @field_validator("pairs")
    @classmethod
    def _pairs(cls, value: list[str]) -> list[str]:
        from dragoman.languages import parse_pair

        for pair in value:
            parse_pair(pair)  # ValueError: a validation error naming the pair
        return value

    @field_validator("url")
    @classmethod
    def _http(cls, value: str) -> str:
        if not value.startswith(("http://", "https://")):
            raise ValueError(f"backend url {value!r} must start with http:// or https://")
        return value.rstrip("/")


class RouteSettings(MetricsKeyed, HostChecked):
    backends: list[BackendSpec] = []
    """Backends: in a TOML config ([[backends]] url/name/pairs), or as a JSON list on the
    command line; `--backend-urls` is the short form."""

    backend_urls: list[str] = []
    """Backend URLs whose pairs are learned from their /v1/languages (comma separated)."""

    host: str = "127.0.0.1"
    """Address to bind."""

    port: int = Field(default=8080, ge=0, le=65535)
    """Port to bind."""

    check_interval: float = Field(default=2.0, gt=0)
    """Seconds between active health checks of each backend's /ready."""

    check_timeout: float = Field(default=2.0, gt=0)
    """Seconds a health check may take."""

    fail_threshold: int = Field(default=2, ge=1)
    """Consecutive failed checks (or 5xx answers) that eject a backend."""

    recover_threshold: int = Field(default=2, ge=1)
    """Consecutive passed checks that (re)admit a backend."""

    max_in_flight: int = Field(default=64, ge=1)
    """Most requests in flight to one backend; beyond it, 503 backends_busy."""

    max_connections: int = Field(default=256, ge=1)
    """Pooled connections to all backends together."""

    timeout: float = Field(default=300.0, gt=0)
    """Seconds a backend may take to answer one request."""

    connect_timeout: float = Field(default=2.0, gt=0)
    """Seconds to open a connection to a backend."""

    max_body_bytes: int = Field(default=4 * 1024 * 1024, ge=1024)
    """Largest request body the proxy reads (413 `body_too_large`)."""

    keep_alive_seconds: int = Field(default=30, ge=1)
    """Idle client connections close after this long (longer than HTTP clients' pools keep
    theirs, as on `dragoman serve`)."""

    cors_origins: str = "*"
    """Access-Control-Allow-Origin for browser clients, as on `dragoman serve`; empty: none."""

    log_level: Literal["debug", "info", "warning", "error"] = "info"
    """Log level."""

    log_format: Literal["text", "json"] = "text"
    """Log lines: `text`, or `json` (one JSON object a line on stderr), as on `dragoman
    serve`."""

    gc_freeze: bool = True
    """As on `dragoman serve`: once started, freeze what is alive out of Python's garbage
    collector's sight and raise its thresholds, so a full collection walks only what
    requests allocate (the proxy's imports: ~70,000 objects)."""

    @field_validator("backend_urls", mode="before")
    @classmethod
    def _split(cls, value: object) -> object:
        items = value.split(",") if isinstance(value, str) else value
        return [v.strip() for v in items if v.strip()] if isinstance(items, list) else items

    @model_validator(mode="after")
    def _merge(self) -> RouteSettings:
        self.backends = [*self.backends, *(BackendSpec(url=u) for u in self.backend_urls)]
        if not self.backends:
            raise ValueError("no backends: give --backend-urls or [[backends]] in the config")
        return self


class KeysSettings(_Base):
    api_keys_file: Path
    """The API keys file a server reads (`dragoman serve --api-keys-file`)."""


class KeyNameSettings(KeysSettings):
    name: CliPositionalArg[str]
    """The key's name (shown in metrics and `dragoman keys list`; the key itself never is)."""
