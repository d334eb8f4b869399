"""Activation smoothing for the int8 forms: a few input channels of a linear layer carry values
far larger than the rest, so an int8 scale per token fitted to them leaves the others a handful
of levels. Dividing such a channel by s and multiplying the weights that read it by s changes
nothing in exact arithmetic and moves the range from the activation, quantized per token at run
time, to the weight, quantized per output channel once (SmoothQuant: s = max|x|^a / max|w|^(1-a)).

The division goes where it costs nothing at run time: into the RMSNorm weight before q/k/v
(`input_layernorm`) and before gate/up (`post_attention_layernorm`), and into up_proj's rows
before down_proj (its input is silu(gate) * up, linear in up). The ranges of the activations
come from one float32 forward pass over the prompt's own worked examples (engine/prompts.py),
translated each way: no evaluation text.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

ALPHA = 0.5
# (the norm or layer whose output feeds them, the layers that read it), per block
_GROUPS = (
    ("input_layernorm", ("self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj")),
    ("post_attention_layernorm", ("mlp.gate_proj", "mlp.up_proj")),
    ("mlp.up_proj", ("mlp.down_proj",)),
)


def calibration_texts(tokenizer: Any) -> Iterator[str]:
    """The chat prompt of each worked example with its answer, English to each language with
    examples and back."""
    from dragoman.engine.prompts import EXAMPLES, chat_messages

    for lang in EXAMPLES:
        if lang == "en":
            continue
        for source, target in (("en", lang), (lang, "en")):
            for i in range(len(EXAMPLES[source])):
                messages = chat_messages(EXAMPLES[source][i], source, target)
                messages.append({"role": "assistant", "content": EXAMPLES[target][i]})
                yield tokenizer.apply_chat_template(messages, tokenize=False)


def activation_ranges(prepared: Path) -> dict[str, Any]:
    """max |x| over the calibration texts of each input channel of every linear layer of the
    model in `prepared`, run in float32: {"model.layers.<n>.<layer>": tensor[in]}."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(prepared)
    model = AutoModelForCausalLM.from_pretrained(prepared, dtype=torch.float32).eval()
    ranges: dict[str, Any] = {}
    hooks = []
    for name, module in model.named_modules():
        if isinstance(module, torch.nn.Linear) and name.startswith("model.layers."):

            def record(_m: Any, args: Any, name: str = name) -> None:
                seen = args[0].detach().abs().reshape(-1, args[0].shape[-1]).amax(dim=0)
                ranges[name] = torch.maximum(ranges[name], seen) if name in ranges else seen

            hooks.append(module.register_forward_pre_hook(record))
    try:
        with torch.inference_mode():
            for text in calibration_texts(tokenizer):
                ids = tokenizer(text, add_special_tokens=False, return_tensors="pt")["input_ids"]
                model.model(input_ids=ids)
    finally:
        for h in hooks:
            h.remove()
    return ranges


def smooth(weights: dict[str, Any], ranges: dict[str, Any], alpha: float = ALPHA) -> None:
    """Fold the smoothing scales into `weights` in place: float32 tensors by module name
    (`model.layers.<n>.mlp.up_proj.weight`, `...input_layernorm.weight`), in every block
    `ranges` has (activation_ranges' names)."""
    import torch

    for b in sorted({int(name.split(".")[2]) for name in ranges}):
        prefix = f"model.layers.{b}."
        for source, readers in _GROUPS:
            x_max = ranges[prefix + readers[0]].float().clamp(min=1e-5)
            w_max = torch.stack(
                [weights[f"{prefix}{r}.weight"].abs().amax(dim=0) for r in readers]
            ).amax(dim=0)
            s = (x_max.pow(alpha) / w_max.clamp(min=1e-5).pow(1 - alpha)).clamp(min=1e-2, max=1e2)
            for r in readers:
                weights[f"{prefix}{r}.weight"] = weights[f"{prefix}{r}.weight"] * s  # columns
            key = f"{prefix}{source}.weight"
            if source.endswith("layernorm"):
                weights[key] = weights[key] / s
            else:  # up_proj's output channels are its rows
                weights[key] = weights[key] / s[:, None]
