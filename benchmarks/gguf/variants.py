"""GGUF variants of the default model measured against the shipped file and the Q8_0 form
(benchmarks/results/gguf-forms-avx512bf16-2core): every layer as Q8_0 (q8), as Q4_0 with
gguf-py's reference rounding (q4; q4head with the output head too; q4refmix keeping the shipped
Q8_0 layers and its Q6_K ones as Q8_0), Q4_0 with a least-squares scale search (q4opt, q4mix) or
one weighted by x^2 as llama.cpp's K-quants do (q4w), IQ4_NL as llama.cpp quantizes it without
an importance matrix (iq4), Q5_0 throughout (q5), and Q4_0 only on the FFN's gate and up
projections with Q8_0 elsewhere (ffn4, ffn4w). Research code, not the product's
(src/dragoman/models/gguf_forms.py makes the form dragoman runs).

    python benchmarks/gguf/variants.py NAME OUT.gguf
"""

import sys
import time
from pathlib import Path

import gguf
import numpy as np
from gguf import quants

from dragoman.models.gguf_forms import write_like

SRC = Path.home() / ".cache/dragoman/models/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"
T = gguf.GGMLQuantizationType


def q4_0(values):
    """Q4_0 blocks (d f16, 16 bytes of nibbles) with the scale of least squared error."""
    rows = values.reshape(-1, values.shape[-1]).astype(np.float32)
    blocks = rows.reshape(-1, 32)
    out = np.empty((blocks.shape[0], 18), dtype=np.uint8)
    step = 1 << 16
    for s in range(0, blocks.shape[0], step):
        x = blocks[s : s + step]
        imax = np.abs(x).argmax(axis=-1)[:, None]
        m = np.take_along_axis(x, imax, axis=-1)  # signed value of largest magnitude
        safe = np.where(m == 0, 1, m)
        best_err = np.full((x.shape[0], 1), np.inf, dtype=np.float32)
        best_d = np.zeros((x.shape[0], 1), dtype=np.float32)
        for levels in [-(8 + 0.1 * k) for k in range(-10, 11)] + [
            7 + 0.1 * k for k in range(-10, 11)
        ]:
            L = np.clip(np.rint(x * (levels / safe)), -8, 7)
            ll = (L * L).sum(-1, keepdims=True)
            d = np.where(ll > 0, (x * L).sum(-1, keepdims=True) / np.where(ll > 0, ll, 1), 0)
            d = d.astype(np.float16).astype(np.float32)
            L2 = np.clip(np.rint(x / np.where(d == 0, 1, d)), -8, 7) * (d != 0)
            err = ((x - d * L2) ** 2).sum(-1, keepdims=True)
            better = err < best_err
            best_err = np.where(better, err, best_err)
            best_d = np.where(better, d, best_d)
        q = (
            np.clip(np.rint(x / np.where(best_d == 0, 1, best_d)), -8, 7) * (best_d != 0) + 8
        ).astype(np.uint8)
        q = q.reshape(-1, 2, 16)
        out[s : s + step, 2:] = q[:, 0, :] | (q[:, 1, :] << 4)
        out[s : s + step, :2] = best_d.astype(np.float16).view(np.uint8)
    return out.reshape(*values.shape[:-1], values.shape[-1] // 32 * 18)


K = np.array(
    [-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113], dtype=np.float32
)
MID = (K[1:] + K[:-1]) / 2


def _idx(y):
    return np.searchsorted(MID, y).astype(np.uint8)


def _weighted_4bit(values, levels_at, codes, ntry=7):
    """18-byte blocks of 32 values (an fp16 scale, then 16 bytes of 4-bit codes) with llama.cpp's
    x^2-weighted scale search: `levels_at(x, itry, peak)` the levels try `itry` rounds the
    blocks to, `codes(x, d)` the codes for the chosen scales `d`."""
    shape = values.shape
    blocks = np.asarray(values, np.float32).reshape(-1, 32)
    out = np.empty((len(blocks), 18), np.uint8)
    for at in range(0, len(blocks), 1 << 16):
        x = blocks[at : at + (1 << 16)]
        w = x * x
        peak = np.take_along_axis(x, np.abs(x).argmax(-1)[:, None], -1)
        safe = np.where(peak == 0, 1, peak)
        best_d = np.zeros((len(x), 1), np.float32)
        best_score = np.full((len(x), 1), -np.inf, np.float32)
        for itry in range(-ntry, ntry + 1):
            v = levels_at(x, itry, safe)
            sumqx = (w * v * x).sum(-1, keepdims=True)
            sumq2 = (w * v * v).sum(-1, keepdims=True)
            ok = sumq2 > 0
            d = np.where(ok, sumqx / np.where(ok, sumq2, 1), 0)
            score = np.where(ok, d * sumqx, -np.inf)
            better = score > best_score
            best_score = np.where(better, score, best_score)
            best_d = np.where(better, d, best_d)
        d16 = best_d.astype(np.float16)
        q = codes(x, d16.astype(np.float32)).reshape(-1, 2, 16)
        out[at : at + (1 << 16), 2:] = q[:, 0, :] | (q[:, 1, :] << 4)
        out[at : at + (1 << 16), :2] = d16.view(np.uint8)
    return out.reshape(*shape[:-1], shape[-1] // 32 * 18)


def iq4_nl(values, ntry=7):
    """IQ4_NL blocks like llama.cpp's quantize_row_iq4_nl_impl without an imatrix (weights x^2)."""
    return _weighted_4bit(
        values,
        lambda x, itry, safe: K[_idx(x * ((itry + K[0]) / safe if itry else K[0] / safe))],
        lambda x, d: _idx(x / np.where(d == 0, 1, d)),
        ntry,
    )


def q4w(values, ntry=7):
    """Q4_0 with llama.cpp-style x^2-weighted scale search (levels -8..7)."""
    return _weighted_4bit(
        values,
        lambda x, itry, safe: np.clip(np.rint(x * ((-8 + 0.1 * itry) / safe)), -8, 7),
        lambda x, d: (np.clip(np.rint(x / np.where(d == 0, 1, d)), -8, 7) * (d != 0) + 8).astype(
            np.uint8
        ),
        ntry,
    )


def variant(name):
    # map tensor -> new type (None: as is)
    def f(t):
        if t.tensor_type == T.F32:
            return None
        if name == "q8":
            return T.Q8_0 if t.name != "token_embd.weight" else None
        if name == "q4":
            return T.Q4_0 if t.name not in ("token_embd.weight", "output.weight") else None
        if name == "q4head":
            return T.Q4_0 if t.name != "token_embd.weight" else None
        if name == "head5":
            return T.Q5_0 if t.name == "output.weight" else None
        if name == "q4opt":
            return "Q4OPT" if t.name not in ("token_embd.weight", "output.weight") else None
        if name == "q4mix":
            if t.name in ("token_embd.weight", "output.weight"):
                return None
            return T.Q8_0 if t.tensor_type in (T.Q8_0, T.Q6_K) else "Q4OPT"
        if name == "q4refmix":
            if t.name in ("token_embd.weight", "output.weight") or t.tensor_type == T.Q8_0:
                return None
            return T.Q8_0 if t.tensor_type == T.Q6_K else T.Q4_0
        if name in ("iq4", "q4w"):
            if t.name in ("token_embd.weight", "output.weight") or t.tensor_type == T.Q8_0:
                return None
            return T.Q8_0 if t.tensor_type == T.Q6_K else name.upper()
        if name in ("ffn4", "ffn4w", "ffniq4"):
            if t.name == "token_embd.weight" or t.tensor_type == T.Q8_0:
                return None
            if ".ffn_gate." in t.name or ".ffn_up." in t.name:
                return {"ffn4": T.Q4_0, "ffn4w": "Q4W", "ffniq4": "IQ4"}[name]
            return T.Q8_0
        if name == "q5":
            return T.Q5_0 if t.name not in ("token_embd.weight", "output.weight") else None
        raise SystemExit(name)

    return f


def main(name, out):
    started = time.time()
    r = gguf.GGUFReader(SRC)
    pick = variant(name)
    datas = []
    for t in r.tensors:
        new = pick(t)
        if new is None or new == t.tensor_type:
            data, typ = t.data, t.tensor_type
        elif new == "IQ4":
            data, typ = (
                iq4_nl(quants.dequantize(t.data, t.tensor_type).astype(np.float32)),
                T.IQ4_NL,
            )
        elif new == "Q4W":
            data, typ = q4w(quants.dequantize(t.data, t.tensor_type).astype(np.float32)), T.Q4_0
        elif new == "Q4OPT":
            data, typ = q4_0(quants.dequantize(t.data, t.tensor_type).astype(np.float32)), T.Q4_0
        else:
            x = quants.dequantize(t.data, t.tensor_type).astype(np.float32)
            data, typ = quants.quantize(x, new), new
        datas.append((t.name, data, typ))
    write_like(r, Path(out), datas)
    print(name, out, Path(out).stat().st_size / 1e6, "MB", round(time.time() - started, 1), "s")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
