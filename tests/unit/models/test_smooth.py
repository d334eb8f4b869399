"""models/smooth.py: the scales change nothing in exact arithmetic and flatten the inputs."""

from __future__ import annotations

import torch

from dragoman.models.smooth import smooth

H, F = 16, 40


def _block(w: dict[str, torch.Tensor], x: torch.Tensor) -> tuple[torch.Tensor, ...]:
    """One block's linear layers as the model runs them (norms without their 1/rms, which
    the scales do not touch): the q/k/v outputs, gate/up's, and down's, and down's input."""
    p = "model.layers.0."
    n1 = x * w[p + "input_layernorm.weight"]
    qkv = [n1 @ w[f"{p}self_attn.{n}_proj.weight"].T for n in "qkv"]
    n2 = x * w[p + "post_attention_layernorm.weight"]
    gate, up = n2 @ w[p + "mlp.gate_proj.weight"].T, n2 @ w[p + "mlp.up_proj.weight"].T
    h = torch.nn.functional.silu(gate) * up
    return (*qkv, gate, h @ w[p + "mlp.down_proj.weight"].T, n1, h)


def test_smoothing_keeps_every_output_and_flattens_the_inputs() -> None:
    g = torch.Generator().manual_seed(0)
    p = "model.layers.0."
    w = {
        p + "input_layernorm.weight": torch.rand(H, generator=g) + 0.5,
        p + "post_attention_layernorm.weight": torch.rand(H, generator=g) + 0.5,
        **{f"{p}self_attn.{n}_proj.weight": torch.randn(H, H, generator=g) for n in "qkv"},
        p + "mlp.gate_proj.weight": torch.randn(F, H, generator=g),
        p + "mlp.up_proj.weight": torch.randn(F, H, generator=g),
        p + "mlp.down_proj.weight": torch.randn(H, F, generator=g),
    }
    x = torch.randn(32, H, generator=g, dtype=torch.float64).float()
    x[:, 3] *= 50  # an outlier channel, as the model's have
    before = _block(w, x)
    ranges = {
        p + "self_attn.q_proj": before[-2].abs().amax(dim=0),
        p + "mlp.gate_proj": (x * w[p + "post_attention_layernorm.weight"]).abs().amax(dim=0),
        p + "mlp.down_proj": before[-1].abs().amax(dim=0),
    }
    smoothed = dict(w)
    smooth(smoothed, ranges)
    after = _block(smoothed, x)
    for b, a in zip(before[:5], after[:5], strict=True):
        assert torch.allclose(a, b, rtol=1e-4, atol=1e-3)
    spread = lambda t: float(t.abs().amax(dim=0).max() / t.abs().amax(dim=0).median())  # noqa: E731
    assert spread(after[-2]) < spread(before[-2]) / 3  # the outlier channel, tamed
