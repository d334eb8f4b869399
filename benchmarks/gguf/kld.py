"""How far a GGUF variant moves the model from the shipped GGUF: each model (dequantized by
transformers' GGUF loader, run by torch in float32, deterministic) reads 108 eval items (seed 7,
6 per pair and kind, `dragoman eval`'s sets) with their reference translation as the
assistant's reply; over the reply's tokens, the mean KL divergence of the variant's next-token
distribution from the shipped one's, the share of tokens whose top token is the same, and the
perplexity of the reference. One JSON line per model.

    python benchmarks/gguf/kld.py VARIANT.gguf [...]
"""

from __future__ import annotations

import json
import math
import sys
import time
from pathlib import Path
from typing import Any

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

from dragoman.eval import sets

MODELS = Path.home() / ".cache/dragoman/models"
SHIPPED = MODELS / "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"
NAMES = {"fr": "French", "de": "German", "es": "Spanish", "ko": "Korean", "zh": "Chinese"}
NAMES["ja"] = "Japanese"


def encode(tok: Any, item: sets.EvalItem) -> tuple[list[int], list[int]]:
    ask = f"Translate from English into {NAMES[item.target_lang]}. Output only the translation."
    messages = [
        {"role": "system", "content": "You are a professional translator."},
        {"role": "user", "content": f"{ask}\n\n{item.source}"},
    ]
    head = tok.apply_chat_template(messages, add_generation_prompt=True, tokenize=True)
    if not isinstance(head, list):
        head = head["input_ids"]
    tail = tok(item.reference + "<|im_end|>", add_special_tokens=False)["input_ids"]
    return list(head), list(tail)


@torch.no_grad()
def logprobs(path: Path, encoded: list[tuple[list[int], list[int]]]) -> list[torch.Tensor]:
    model = AutoModelForCausalLM.from_pretrained(
        path.parent, gguf_file=path.name, dtype=torch.float32
    )
    model.eval()
    out = []
    for head, tail in encoded:
        logits = model(torch.tensor([head + tail])).logits[0, len(head) - 1 : -1]
        out.append(torch.log_softmax(logits.float(), -1))
    return out


def nll(lps: list[torch.Tensor], encoded: list[tuple[list[int], list[int]]]) -> float:
    return -sum(
        float(lp.gather(1, torch.tensor(tail)[:, None]).sum())
        for lp, (_, tail) in zip(lps, encoded, strict=True)
    )


def main() -> None:
    torch.set_num_threads(2)
    tok = AutoTokenizer.from_pretrained(MODELS / "qwen2.5-coder-0.5b-instruct")
    pairs = [(p.split("-")[0], p.split("-")[1]) for p in sets.DEFAULT_PAIRS]
    items = sets.build(pairs, sets.KINDS, 6, 7)
    encoded = [encode(tok, item) for item in items]
    n = sum(len(tail) for _, tail in encoded)
    ref = logprobs(SHIPPED, encoded)
    print(
        json.dumps(
            {"gguf": SHIPPED.name, "tokens": n, "ppl": round(math.exp(nll(ref, encoded) / n), 4)}
        ),
        flush=True,
    )
    for arg in sys.argv[1:]:
        started = time.monotonic()
        lps = logprobs(Path(arg), encoded)
        kl = sum(float((r.exp() * (r - v)).sum()) for r, v in zip(ref, lps, strict=True))
        same = sum(int((r.argmax(-1) == v.argmax(-1)).sum()) for r, v in zip(ref, lps, strict=True))
        row = {
            "gguf": Path(arg).name,
            "kld": round(kl / n, 5),
            "top1_same": round(same / n, 4),
            "ppl": round(math.exp(nll(lps, encoded) / n), 4),
            "s": round(time.monotonic() - started),
        }
        print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
