"""models/quantize.py on a tiny two-layer model: a real GGUF written with the gguf library, real
safetensors, compressed-tensors' own decompression to check the stored integers."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch
from compressed_tensors.compressors.naive_quantized.base import NaiveQuantizationCompressor
from compressed_tensors.compressors.pack_quantized.base import PackedQuantizationCompressor
from compressed_tensors.quantization import QuantizationConfig
from safetensors.torch import load_file, save_file

from dragoman.errors import ModelError
from dragoman.models import quantize as q

HIDDEN, FFN, VOCAB = 64, 128, 96


def _weights(seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    shapes = {
        "blk.0.attn_q.weight": (HIDDEN, HIDDEN),
        "blk.0.ffn_down.weight": (HIDDEN, FFN),
        "output.weight": (VOCAB, HIDDEN),
        "token_embd.weight": (VOCAB, HIDDEN),
    }
    return {k: rng.normal(0, 0.05, s).astype(np.float32) for k, s in shapes.items()}


def _model(tmp_path: Path, weights: dict[str, np.ndarray], tied: bool = False) -> tuple[Path, Path]:
    """(GGUF, prepared dir) of one model; the prepared weights are the GGUF's in bf16, as
    `prepare` makes them."""
    import gguf

    names = {
        "blk.0.attn_q.weight": "model.layers.0.self_attn.q_proj.weight",
        "blk.0.ffn_down.weight": "model.layers.0.mlp.down_proj.weight",
        "output.weight": "lm_head.weight",
        "token_embd.weight": "model.embed_tokens.weight",
    }
    path = tmp_path / "tiny.gguf"
    writer = gguf.GGUFWriter(str(path), "qwen2")
    for name, w in weights.items():
        if tied and name == "output.weight":
            continue
        writer.add_tensor(name, w)
    writer.add_tensor("blk.0.attn_norm.weight", np.ones(HIDDEN, dtype=np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    prepared = tmp_path / "prepared"
    prepared.mkdir()
    tensors = {
        names[k]: torch.from_numpy(w).to(torch.bfloat16)
        for k, w in weights.items()
        if not (tied and k == "output.weight")
    }
    tensors["model.layers.0.input_layernorm.weight"] = torch.ones(HIDDEN, dtype=torch.bfloat16)
    save_file(tensors, prepared / "model.safetensors")
    (prepared / "config.json").write_text(json.dumps({"model_type": "qwen2"}))
    (prepared / "tokenizer.json").write_text("{}")
    return path, prepared


def test_gguf_names_map_to_the_models_linear_layers() -> None:
    assert q.linear_module("blk.3.attn_output.weight") == "model.layers.3.self_attn.o_proj"
    assert q.linear_module("blk.12.ffn_gate.weight") == "model.layers.12.mlp.gate_proj"
    assert q.linear_module("output.weight") == "lm_head"
    assert q.linear_module("token_embd.weight") is None
    assert q.linear_module("blk.0.attn_norm.weight") is None


@pytest.mark.parametrize("form", q.FORMS)
def test_quantized_checkpoint_decompresses_close_to_the_gguf(tmp_path: Path, form: str) -> None:
    weights = _weights()
    gguf_file, prepared = _model(tmp_path, weights)
    out = tmp_path / form
    q.quantize(gguf_file, prepared, out, form, group_size=32)  # type: ignore[arg-type]

    config = json.loads((out / "config.json").read_text())
    qc = QuantizationConfig.model_validate(config["quantization_config"])
    assert qc.quant_method == "compressed-tensors"
    scheme = qc.config_groups["linear"]
    assert "lm_head" in scheme.targets
    tensors = load_file(out / "model.safetensors")
    # Everything but the linear layers is carried over as prepared.
    assert torch.equal(
        tensors["model.embed_tokens.weight"],
        torch.from_numpy(weights["token_embd.weight"]).to(torch.bfloat16),
    )
    assert "model.layers.0.input_layernorm.weight" in tensors
    assert (out / "tokenizer.json").is_file()
    compressor = PackedQuantizationCompressor if form == "w4a16" else NaiveQuantizationCompressor
    for gguf_name, module in [
        ("blk.0.attn_q.weight", "model.layers.0.self_attn.q_proj"),
        ("blk.0.ffn_down.weight", "model.layers.0.mlp.down_proj"),
        ("output.weight", "lm_head"),
    ]:
        assert f"{module}.weight_scale" in tensors
        prefix = f"{module}."
        state = {k.removeprefix(prefix): v for k, v in tensors.items() if k.startswith(prefix)}
        restored = compressor.decompress(state, scheme)["weight"].float()
        original = torch.from_numpy(weights[gguf_name])
        # Round to nearest: at most half a step off, a step being range / levels.
        levels = 15 if form == "w4a16" else 254
        step = (original.max() - original.min()) / levels
        assert (restored - original).abs().max() <= step
        assert (restored - original).abs().mean() < step / 2


def test_tied_head_stays_with_the_embedding(tmp_path: Path) -> None:
    gguf_file, prepared = _model(tmp_path, _weights(), tied=True)
    q.quantize(gguf_file, prepared, tmp_path / "out", "w8a8")
    config = json.loads((tmp_path / "out" / "config.json").read_text())["quantization_config"]
    assert config["ignore"] == ["lm_head"]
    assert "lm_head" not in config["config_groups"]["linear"]["targets"]


def test_a_gguf_that_does_not_match_the_prepared_model_is_refused(tmp_path: Path) -> None:
    gguf_file, _ = _model(tmp_path, _weights(seed=0))
    other = tmp_path / "other"
    other.mkdir()
    _, prepared_other = _model(other, _weights(seed=1))
    with pytest.raises(ModelError, match="differs"):
        q.quantize(gguf_file, prepared_other, tmp_path / "out", "w8a8")
    assert not (tmp_path / "out").exists()


def test_unknown_form_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ModelError, match="unknown quantized form"):
        q.quantize(tmp_path / "x.gguf", tmp_path, tmp_path / "out", "w2")  # type: ignore[arg-type]


def test_mixed_form_keeps_the_named_layers_as_prepared(tmp_path: Path) -> None:
    weights = _weights()
    gguf_file, prepared = _model(tmp_path, weights)
    out = tmp_path / "mixed"
    q.quantize(gguf_file, prepared, out, "w8a8-mixed", full_layers=[r"model\.layers\.0\..*"])
    config = json.loads((out / "config.json").read_text())["quantization_config"]
    kept = ["model.layers.0.mlp.down_proj", "model.layers.0.self_attn.q_proj"]
    assert config["ignore"] == kept
    tensors = load_file(out / "model.safetensors")
    before = load_file(prepared / "model.safetensors")
    for module in kept:
        assert f"{module}.weight_scale" not in tensors
        assert torch.equal(tensors[f"{module}.weight"], before[f"{module}.weight"])
    assert tensors["lm_head.weight"].dtype == torch.int8  # the rest is quantized still
    assert "lm_head.weight_scale" in tensors


def test_mixed_form_refuses_a_layer_the_model_lacks(tmp_path: Path) -> None:
    gguf_file, prepared = _model(tmp_path, _weights())
    with pytest.raises(ModelError, match=r"no layer model\\\.layers\\\.5"):
        q.quantize(
            gguf_file,
            prepared,
            tmp_path / "out",
            "w8a8-mixed",
            full_layers=[r"model\.layers\.5\.mlp\.down_proj"],
        )


def test_mixed_form_refuses_to_split_a_layer_vllm_fuses() -> None:
    attention = {f"m.0.self_attn.{n}_proj" for n in "qkv"}
    q._check_fused(attention, {"m.0.self_attn.o_proj", "m.0.mlp.up_proj"})  # whole: fine
    with pytest.raises(ModelError, match="runs them as one layer"):
        q._check_fused({"m.0.self_attn.v_proj"}, {"m.0.self_attn.q_proj"})
