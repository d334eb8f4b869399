"""Quantized forms of a catalogue model for vLLM's CPU kernels, made from the shipped GGUF.

A decode step on a CPU reads every weight once per token, so it is bound by memory bandwidth:
the bf16/fp32 safetensors that `prepare` makes move 2.5-5x the bytes of the 4-5-bit GGUF they
came from, with no more information in them. Here the GGUF's weights are dequantized to fp32
(the exact values the GGUF encodes) and re-quantized into compressed-tensors checkpoints that
vLLM's CPU kernels run without AMX:

- ``w4a16``: every linear layer (the output head included) as 4-bit integers in groups of
  ``group_size`` input channels with a scale and a zero point (``CPUWNA16LinearKernel``). The
  token embedding stays as prepared: it is looked up, never multiplied, and vLLM's quantized
  embedding needs Triton, which the CPU build lacks.
- ``w8a8``: linear layers as int8 per output channel, activations quantized per token at run
  time (``CPUInt8ScaledMMLinearKernel``, oneDNN).
- ``w8a8-mixed``: the same, but the layers the catalogue names (``w8a8_full``, found by
  ``benchmarks/quantized/sensitivity.py``: those whose int8 round trip moves the model's
  output most) keep their weights as prepared and run at the engine's dtype; the checkpoint's
  ``ignore`` list names them.

compressed-tensors (vLLM's own checkpoint format library) computes the quantization parameters
and packs the integers; what is ours is the map from GGUF tensors to the model's layers.
"""

from __future__ import annotations

import json
import logging
import re
import shutil
from collections.abc import Collection, Iterator
from pathlib import Path
from typing import Any, Literal

from dragoman.errors import ModelError

log = logging.getLogger(__name__)

Form = Literal["w4a16", "w8a8", "w8a8-mixed"]
FORMS: tuple[Form, ...] = ("w4a16", "w8a8", "w8a8-mixed")

# GGUF tensor names (llama.cpp's) -> Hugging Face module names, for the Llama/Qwen2/Gemma layout.
_BLOCK = re.compile(r"^blk\.(\d+)\.(\w+)\.weight$")
_LAYER_MODULES = {
    "attn_q": "self_attn.q_proj",
    "attn_k": "self_attn.k_proj",
    "attn_v": "self_attn.v_proj",
    "attn_output": "self_attn.o_proj",
    "ffn_gate": "mlp.gate_proj",
    "ffn_up": "mlp.up_proj",
    "ffn_down": "mlp.down_proj",
}
_EMBEDDING = "model.embed_tokens"
_HEAD = "lm_head"


# Layers vLLM runs as one (qkv_proj, gate_up_proj): their parts must share one scheme.
_FUSED = (("q_proj", "k_proj", "v_proj"), ("gate_proj", "up_proj"))


def _check_fused(kept: set[str], done: set[str]) -> None:
    for module in kept:
        prefix, _, name = module.rpartition(".")
        for group in _FUSED:
            if name in group and (split := {f"{prefix}.{g}" for g in group} & done):
                raise ModelError(
                    f"{module} is kept in full but {', '.join(sorted(split))} is not: vLLM "
                    "runs them as one layer"
                )


def linear_module(gguf_name: str) -> str | None:
    """The model's linear module a GGUF weight belongs to, or None for any other tensor."""
    if gguf_name == "output.weight":
        return _HEAD
    m = _BLOCK.match(gguf_name)
    if m and m.group(2) in _LAYER_MODULES:
        return f"model.layers.{m.group(1)}.{_LAYER_MODULES[m.group(2)]}"
    return None


def _gguf_weights(gguf: Path) -> Iterator[tuple[str, Any]]:
    """(GGUF name, fp32 torch tensor [out, in]) for every 2-D weight, dequantized exactly."""
    import numpy as np
    import torch
    from gguf import GGUFReader
    from gguf.quants import dequantize

    reader = GGUFReader(gguf)
    for t in reader.tensors:
        if len(t.shape) != 2:
            continue
        values = dequantize(t.data, t.tensor_type)
        yield t.name, torch.tensor(np.asarray(values), dtype=torch.float32)


def _scheme(form: Form, group_size: int, targets: list[str]) -> Any:
    from compressed_tensors.quantization import QuantizationArgs, QuantizationScheme

    if form in ("w8a8", "w8a8-mixed"):
        return QuantizationScheme(
            targets=targets,
            weights=QuantizationArgs(num_bits=8, type="int", symmetric=True, strategy="channel"),
            input_activations=QuantizationArgs(
                num_bits=8, type="int", symmetric=True, strategy="token", dynamic=True
            ),
        )
    return QuantizationScheme(
        targets=targets,
        weights=QuantizationArgs(
            num_bits=4, type="int", symmetric=False, strategy="group", group_size=group_size
        ),
    )


def _compress(weight: Any, scheme: Any) -> dict[str, Any]:
    """The module's compressed tensors (weight_packed/weight, weight_scale, ...) for `weight`."""
    import torch
    from compressed_tensors.compressors.naive_quantized.base import NaiveQuantizationCompressor
    from compressed_tensors.compressors.pack_quantized.base import PackedQuantizationCompressor
    from compressed_tensors.quantization.utils.helpers import calculate_qparams

    args = scheme.weights
    if args.strategy == "group":
        out_ch, in_ch = weight.shape
        if in_ch % args.group_size:
            raise ModelError(f"{in_ch} inputs do not split into groups of {args.group_size}")
        grouped = weight.reshape(out_ch, in_ch // args.group_size, args.group_size)
        lo, hi = grouped.amin(dim=-1), grouped.amax(dim=-1)
    else:  # per output channel
        lo, hi = weight.amin(dim=-1, keepdim=True), weight.amax(dim=-1, keepdim=True)
    scale, zero_point = calculate_qparams(lo, hi, args)
    state = {"weight": weight, "weight_scale": scale.to(torch.float32)}
    if not args.symmetric:
        state["weight_zero_point"] = zero_point
    # Weight-only forms are bit-packed into int32; W8A8 keeps plain int8 for oneDNN.
    compressor = (
        NaiveQuantizationCompressor
        if scheme.input_activations is not None
        else PackedQuantizationCompressor
    )
    return {k: v.contiguous() for k, v in compressor.compress(state, scheme).items()}


def _config(form: Form, group_size: int, head: bool, kept: list[str]) -> dict[str, Any]:
    from compressed_tensors.quantization import QuantizationConfig

    # A head tied to the embedding is the embedding: it stays as prepared.
    targets = ["Linear", _HEAD] if head else ["Linear"]
    groups = {"linear": _scheme(form, group_size, targets)}
    fmt = "pack-quantized" if form == "w4a16" else "int-quantized"
    config = QuantizationConfig(
        config_groups=groups,
        format=fmt,
        quantization_status="compressed",
        ignore=[*kept, *(() if head else (_HEAD,))],
    )
    return dict(config.to_dict())


def quantize(
    gguf: Path,
    prepared: Path,
    out: Path,
    form: Form,
    group_size: int = 32,
    full_layers: Collection[str] = (),
    smooth_alpha: float | None = None,
) -> None:
    """Write to `out` the `form` checkpoint of the model `prepared` holds (its config,
    tokenizer, norms and biases), with the weights re-quantized from `gguf`. The other two
    arguments are the `w8a8-mixed` recipe, and only that form reads them: the linear layers
    whose names match a pattern of `full_layers` (whole, `re.fullmatch`) stay in full, and
    with `smooth_alpha` the activations' ranges are moved into the weights first
    (models/smooth.py)."""
    import torch
    from safetensors.torch import load_file, save_file

    if form not in FORMS:
        raise ModelError(f"unknown quantized form {form!r}; known: {', '.join(FORMS)}")
    tensors: dict[str, Any] = {}
    for f in sorted(prepared.glob("*.safetensors")):
        tensors.update(load_file(f))
    weights: dict[str, Any] = {}
    for name, weight in _gguf_weights(gguf):
        module = linear_module(name)
        if module is None:
            continue  # the embedding: looked up, never multiplied, kept as prepared
        reference = tensors.pop(f"{module}.weight", None)
        if reference is None or tuple(reference.shape) != tuple(weight.shape):
            raise ModelError(f"{gguf.name}: {name} does not match {module} in {prepared}")
        # The prepared weights are the same GGUF values rounded to bf16: a layout check.
        if not torch.allclose(reference.float(), weight, rtol=1e-2, atol=1e-3):
            raise ModelError(f"{gguf.name}: {name} differs from {module} beyond bf16 rounding")
        weights[f"{module}.weight"] = weight
    if not weights:
        raise ModelError(f"{gguf.name} holds no linear layer this map knows")
    mixed = form == "w8a8-mixed"
    if mixed and smooth_alpha is not None:
        _smoothed(prepared, tensors, weights, smooth_alpha)
    linear = _scheme(form, group_size, ["Linear"])
    keep = [re.compile(p) for p in full_layers] if mixed else []
    done: set[str] = set()
    kept: set[str] = set()
    for key, weight in weights.items():
        module = key.removesuffix(".weight")
        if any(p.fullmatch(module) for p in keep):
            tensors[key] = weight.to(torch.bfloat16)  # in full, at the engine's dtype
            kept.add(module)
            continue
        for part, value in _compress(weight, linear).items():
            tensors[f"{module}.{part}"] = value
        done.add(module)
    if unmatched := [p.pattern for p in keep if not any(p.fullmatch(m) for m in kept)]:
        raise ModelError(f"{gguf.name} has no layer {', '.join(unmatched)} to keep in full")
    _check_fused(kept, done)
    groups = _config(form, group_size, head=_HEAD in done, kept=sorted(kept))
    out.mkdir(parents=True, exist_ok=True)
    save_file(tensors, out / "model.safetensors", metadata={"format": "pt"})
    for f in prepared.iterdir():
        if f.is_file() and f.suffix != ".safetensors" and not f.name.startswith(".dragoman"):
            shutil.copy2(f, out / f.name)
    config = json.loads((prepared / "config.json").read_text())
    config["quantization_config"] = groups
    (out / "config.json").write_text(json.dumps(config, indent=2) + "\n")
    log.info(
        "quantized %d modules of %s to %s (%d kept in full)", len(done), gguf.name, form, len(kept)
    )


def _smoothed(prepared: Path, tensors: dict[str, Any], weights: dict[str, Any], a: float) -> None:
    """Smooth `weights` (the GGUF's, float32) and the norms among `tensors` (as prepared) in
    place, from the activations' ranges of the model in `prepared`."""
    import torch

    from dragoman.models.smooth import activation_ranges, smooth

    norms = {k: v.float() for k, v in tensors.items() if k.endswith("layernorm.weight")}
    both = {**weights, **norms}
    smooth(both, activation_ranges(prepared), a)
    for k in weights:
        weights[k] = both[k]
    for k in norms:
        tensors[k] = both[k].to(torch.bfloat16)
