"""Which layers lose quality as w8a8: each linear layer's output error under its int8 round
trip, then the whole model with all but the worst blocks quantized, simulated in float32 and
scored by how far its next-token distribution moves on reference translations.

    python benchmarks/quantized/sensitivity.py MODEL_DIR OUT.json [--per-kind N] [--seed S]

MODEL_DIR is the prepared full-weights model. The texts are `dragoman eval`'s six pairs and
three kinds, drawn with a seed other than the eval's (0 and 1), so the layers are not chosen on
the texts that judge them. Each text is the engine's own chat prompt followed by its reference
translation (teacher forcing); at every reference token the script takes the KL divergence from
the float32 model's distribution to the quantized one's, and whether the top token is the same.

The quantization is what vLLM's int8 CPU kernel does: weights symmetric int8 per output
channel, activations symmetric int8 per token, scaled at run time. In the float32 pass each
linear layer's output error ||W x - Q(W) Q(x)|| / ||W x|| is summed per block (one pass: a
block's KL alone would take a pass each); blocks are ranked by it, and the model is then scored
with everything quantized, with all but the worst N blocks, and with each module kind alone.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

KINDS = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")
GROUPS = {"attention": KINDS[:4], "mlp_in": KINDS[4:6], "down_proj": KINDS[6:]}


def _texts(per_kind: int, seed: int) -> list[tuple[list[dict[str, str]], str]]:
    from dragoman.engine.prompts import chat_messages
    from dragoman.eval.sets import build

    pairs = [("en", t) for t in ("fr", "de", "es", "ko", "zh", "ja")]
    items = build(pairs, ("ui", "sentence", "paragraph"), per_kind, seed)
    return [(chat_messages(i.source, i.source_lang, i.target_lang), i.reference) for i in items]


def _fake_int8(x: Any, dim: int) -> Any:
    scale = x.abs().amax(dim=dim, keepdim=True).clamp(min=1e-8) / 127.0
    return (x / scale).round().clamp(-127, 127) * scale


class Quantizer:
    """Swaps chosen linear layers' weights for their int8 round trip and rounds their inputs
    per token, as hooks: `apply(modules)` then `restore()`."""

    def __init__(self, model: Any) -> None:
        self.model = model
        self.linears = {
            name: m for name, m in model.named_modules() if name.split(".")[-1] in KINDS
        }
        self.saved: dict[str, Any] = {}
        self.hooks: list[Any] = []

    def names(self, blocks: Iterable[int], kinds: Iterable[str] = KINDS) -> list[str]:
        wanted = {(b, k) for b in blocks for k in kinds}
        out = []
        for name in self.linears:
            parts = name.split(".")
            if (int(parts[2]), parts[-1]) in wanted:
                out.append(name)
        return out

    def apply(self, names: Iterable[str]) -> None:
        import torch

        for name in names:
            m = self.linears[name]
            self.saved[name] = m.weight.data
            with torch.no_grad():
                m.weight.data = _fake_int8(m.weight.data, dim=1)
            self.hooks.append(m.register_forward_pre_hook(lambda _m, a: (_fake_int8(a[0], -1),)))

    def restore(self) -> None:
        for name, w in self.saved.items():
            self.linears[name].weight.data = w
        for h in self.hooks:
            h.remove()
        self.saved, self.hooks = {}, []


def _local_errors(quantizer: Quantizer) -> tuple[dict[str, float], list[Any]]:
    """Hooks that add each linear layer's relative output error under the int8 round trip of
    its weights and inputs (the squared norms summed over the pass) into the returned dict."""
    import torch

    err: dict[str, list[float]] = {n: [0.0, 0.0] for n in quantizer.linears}
    hooks = []
    for name, m in quantizer.linears.items():
        wq = _fake_int8(m.weight.data, dim=1)

        def hook(mod: Any, args: Any, out: Any, name: str = name, wq: Any = wq) -> None:
            x = args[0]
            approx = torch.nn.functional.linear(_fake_int8(x, -1), wq, mod.bias)
            err[name][0] += float((approx - out).pow(2).sum())
            err[name][1] += float(out.pow(2).sum())

        hooks.append(m.register_forward_hook(hook))
    return err, hooks  # type: ignore[return-value]


def _score(model: Any, batches: list[tuple[Any, int]], reference: list[Any]) -> dict[str, float]:
    import torch

    kl_sum, agree, n = 0.0, 0, 0
    with torch.inference_mode():
        for (ids, start), ref in zip(batches, reference, strict=True):
            hidden = model.model(input_ids=ids).last_hidden_state[0, start - 1 : -1]
            logp = torch.log_softmax(model.lm_head(hidden).float(), dim=-1)
            kl = (ref.exp() * (ref - logp)).sum(-1)
            kl_sum += float(kl.sum())
            agree += int((logp.argmax(-1) == ref.argmax(-1)).sum())
            n += kl.numel()
    return {"kl": kl_sum / n, "top1": agree / n, "tokens": n}


def main() -> None:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    p = argparse.ArgumentParser()
    p.add_argument("model", type=Path)
    p.add_argument("out", type=Path)
    p.add_argument("--per-kind", type=int, default=2)
    p.add_argument("--seed", type=int, default=11)
    p.add_argument("--worst", default="1,2,3,4,6,8")
    p.add_argument("--worst-down", default="6,12,24")
    p.add_argument(
        "--smooth", type=float, default=None, help="fold activation smoothing of this alpha first"
    )
    a = p.parse_args()
    torch.set_num_threads(2)
    tok = AutoTokenizer.from_pretrained(a.model)
    model = AutoModelForCausalLM.from_pretrained(a.model, dtype=torch.float32).eval()
    if a.smooth is not None:
        from dragoman.models.smooth import activation_ranges, smooth

        state = {k: v.float() for k, v in model.state_dict().items()}
        smooth(state, activation_ranges(a.model), a.smooth)
        model.load_state_dict(state, strict=False)
    batches = []
    for messages, reference in _texts(a.per_kind, a.seed):
        prompt = tok.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
        head = tok(prompt, add_special_tokens=False)["input_ids"]
        tail = tok(reference + "<|im_end|>", add_special_tokens=False)["input_ids"]
        batches.append((torch.tensor([head + tail]), len(head)))
    t0 = time.time()
    q = Quantizer(model)
    err, hooks = _local_errors(q)
    with torch.inference_mode():
        reference = []
        for ids, start in batches:
            hidden = model.model(input_ids=ids).last_hidden_state[0, start - 1 : -1]
            reference.append(torch.log_softmax(model.lm_head(hidden).float(), dim=-1))
    for h in hooks:
        h.remove()
    local = {n: (e / max(o, 1e-12)) ** 0.5 for n, (e, o) in err.items()}
    blocks = model.config.num_hidden_layers
    runs: dict[str, dict[str, float]] = {}

    def run(label: str, names: list[str]) -> dict[str, float]:
        t = time.time()
        q.apply(names)
        try:
            runs[label] = _score(model, batches, reference)
        finally:
            q.restore()
        print(label, json.dumps(runs[label]), f"{time.time() - t:.0f}s", flush=True)
        return runs[label]

    print(f"{len(batches)} texts, reference pass {time.time() - t0:.0f}s", flush=True)
    per_block = {b: sum(local[n] for n in q.names([b])) for b in range(blocks)}
    ranked = sorted(per_block, key=per_block.__getitem__, reverse=True)
    print("blocks by local error:", [(b, round(per_block[b], 3)) for b in ranked], flush=True)
    run("all", q.names(range(blocks)))
    for g, kinds in GROUPS.items():
        run(f"all {g}", q.names(range(blocks), kinds))
    for n in (int(x) for x in a.worst.split(",")):
        kept = set(ranked[:n])
        run(f"all but worst {n}", q.names(b for b in range(blocks) if b not in kept))
    # The down projections, each on its own (vLLM fuses no other layer with it).
    down = sorted(
        (n for n in q.linears if n.endswith("down_proj")), key=local.__getitem__, reverse=True
    )
    for n in (int(x) for x in a.worst_down.split(",")):
        kept_down = set(down[:n])
        run(
            f"all but the worst {n} down_proj",
            [x for x in q.names(range(blocks)) if x not in kept_down],
        )
    a.out.write_text(
        json.dumps(
            {
                "model": str(a.model),
                "texts": len(batches),
                "seed": a.seed,
                "per_kind": a.per_kind,
                "smooth": a.smooth,
                "ranked_blocks": ranked,
                "ranked_down_proj": down,
                "block_error": per_block,
                "layer_error": local,
                "runs": runs,
            },
            indent=2,
        )
        + "\n"
    )


if __name__ == "__main__":
    main()
