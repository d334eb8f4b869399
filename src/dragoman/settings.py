"""One typed settings object per command, built once at the edge (cli.py) and passed down.

Every field is a CLI flag (`--max-num-seqs`) and a `DRAGOMAN_` environment variable
(`DRAGOMAN_MAX_NUM_SEQS`); a TOML file named by `DRAGOMAN_CONFIG` (or `--config`) supplies
defaults below both. Precedence: flag > environment > config file > default.

This module is the base the commands' settings build on: the sources, the parsing helpers, and
the classes several commands share (the model, the engine, the metrics key, the allowed hosts).
Each command's own class lives with the package that runs it (`dragoman serve`'s in
service/settings.py, bench's and tune's in bench/settings.py, ...; dragoman/all_settings.py
lists them all).
"""

from __future__ import annotations

import difflib
import os
import re
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    Field,
    SecretStr,
    field_validator,
    model_validator,
)
from pydantic.fields import FieldInfo
from pydantic_settings import (
    BaseSettings,
    EnvSettingsSource,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    SettingsError,
    TomlConfigSettingsSource,
)

from dragoman.models.catalogue import DEFAULT_MODEL


def comma_list(value: object) -> object:
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
            return comma_list(value)
        if isinstance(decoded, int | float | str) and not isinstance(decoded, bool):
            return comma_list(value)  # one item given alone: DRAGOMAN_CONCURRENCY=5
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
        return comma_list(value)

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

    weights: Literal["host", "full", "w8a8", "w8a8-mixed", "w4a16"] = "host"
    """Which form of a catalogue model's weights the engine loads: `full` (the GGUF dequantized
    to safetensors; run at `dtype`), `w8a8` (int8 weights and int8 activations per token,
    re-quantized from the GGUF), `w8a8-mixed` (w8a8 but for the blocks the catalogue measured to
    lose quality that way, which keep their full weights) or `w4a16` (4-bit weight groups, bf16
    activations). `host`: the engine plan's choice for this machine (`dragoman info` shows it
    and why; full on a GPU and for models outside the catalogue). `dragoman model prepare`
    makes the form this resolves to."""


LLAMA_CPP_PYTHON_VERSION = "0.3.36"


class LlamaCppSettings(ModelSettings):
    llama_cpp_version: str = LLAMA_CPP_PYTHON_VERSION
    """Version of the llama-cpp-python source distribution whose vendored llama.cpp is built."""

    build_jobs: int = Field(default=2, ge=1)
    """Parallel compile jobs."""


def check_threads(value: str) -> str:
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
        return check_threads(value)

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
