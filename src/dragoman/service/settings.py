"""`dragoman serve`'s settings: the server's engine, limits, keys, stores and its models (a
`[[models]]` entry each). In the service, the lowest layer that reads them: the API, the deploy
settings (which build on them), bench and `translate` take them from here."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator, model_validator
from pydantic_settings import CliSuppress

from dragoman.engine.protocol import ContextMode, Quality
from dragoman.settings import EngineSettings, HostChecked, MetricsKeyed, comma_list

MAX_CANDIDATES = 8
"""Most candidates of one sentence (the setting's, a request's, or for its alternatives)."""


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

    candidates: Literal["auto"] | int = Field(default="auto", union_mode="left_to_right")
    """Candidates made for each sentence, the consensus of them kept (service/candidates.py):
    1, the greedy reply alone; N (2-8), the greedy reply and N-1 sampled ones; auto, as many
    as the engine makes for about the price of one (measured at start: a decode step of k
    sequences against one), and only while it has that room free, so 1 where a batch costs
    more (the CPU hosts measured) or under load. A request's `candidates` overrides it."""

    candidates_best: int = Field(default=4, ge=2, le=MAX_CANDIDATES)
    """Candidates for a request with `quality: best`, whatever they cost."""

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

    # -- document jobs: DeepL's /v2/document, /v1/documents, LibreTranslate's /translate_file --

    max_file_bytes: int = Field(default=30 * 2**20, ge=1024)
    """Largest file a document upload may carry (413 `file_too_large`), checked on the
    Content-Length and as the body arrives, before it is read whole; on the upload routes
    only, every other request keeps --max-body-bytes."""

    documents_dir: Path | None = None
    """Where document jobs are kept: each upload, its result and a small JSON status (default:
    DATA_DIR/documents, else a temporary folder when that cannot be written). Servers given
    the same folder answer each other's jobs' status and result."""

    documents_url: str | None = None
    """A Redis-protocol server (Valkey, Redis) to keep document jobs in instead of
    --documents-dir, e.g. `redis://127.0.0.1:6379/0` (with a password, prefer
    DRAGOMAN_DOCUMENTS_URL to the flag): every server given the same store answers any job's
    status and result, whichever took the upload. May be the --cache-url server (the keys are
    apart); it must keep what it is given (no `allkeys-*` eviction policy)."""

    documents_ttl: int = Field(default=3600, ge=1)
    """Seconds a finished document job (its result, or its error) is kept; then it is removed
    (404). A job still translating is never removed."""

    documents_max_bytes: int = Field(default=2 * 2**30, ge=1024)
    """Most bytes of uploads and results kept at once; past it a new upload is refused, 503
    `document_store_full` with Retry-After, until finished jobs expire."""

    documents_max_jobs: int = Field(default=1000, ge=1)
    """Most document jobs kept at once, translating or finished; past it a new upload is
    refused as past --documents-max-bytes."""

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

    @field_validator("candidates")
    @classmethod
    def _candidates(cls, value: str | int) -> str | int:
        if value != "auto" and not 1 <= int(value) <= MAX_CANDIDATES:
            raise ValueError(f"candidates is auto or 1 to {MAX_CANDIDATES}")
        return value

    @field_validator("languages", mode="before")
    @classmethod
    def _split_languages(cls, value: object) -> object:
        return comma_list(value)

    @field_validator("cache_url", "glossary_url", "documents_url")
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
        if self.documents_url and self.documents_dir:
            raise ValueError(
                "--documents-dir and --documents-url both name where document jobs are kept: "
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
