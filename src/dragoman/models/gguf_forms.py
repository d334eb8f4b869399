"""A GGUF form of a catalogue model that llama.cpp's CPU kernels run faster than the shipped file.

The default model ships as "Q4_K_M", which for its 896-wide rows (not a multiple of the 256 that
K-quants need) is mostly Q5_0, with Q4_K, Q6_K and Q8_0 layers. llama.cpp multiplies batches of
Q8_0 (and Q4_0) weights with its tiled x86 kernels, and Q5_0 and the K-quants with generic dot
products, so prompts and many streams at once go ~1.2x faster on Q8_0, while one stream, bound
by the bytes it reads, decodes 0.92-0.99x as fast from a file 1.27x the size
(benchmarks/results/gguf-forms-avx512bf16-2core).

``q8_0``: every 2-D weight of the layers as Q8_0, dequantized from the shipped blocks (the exact
values they encode) and quantized again by gguf-py (llama.cpp's own Python package, its
reference rounding): 8 bits a value hold the shipped 4-6-bit values almost exactly (every
layer so re-encoded: KL divergence 0.0003 from the shipped model over 5,115 tokens of reference
translations; the 4-bit forms measured, 0.055-0.17, were not taken). The token embedding
(looked up; also the output head of a model that ties the two, which then stays as shipped) and
the shipped Q8_0 tensors stay as they are; norms and biases stay float32. Made once, beside the
shipped file. The host's plan picks it for the default model only, where it was measured.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any, Literal

log = logging.getLogger(__name__)

GgufForm = Literal["shipped", "q8_0"]
_KEPT = ("token_embd.weight",)
_BLOCK = 32  # values per Q8_0 block
_VERSION = 1  # in the file's name (form_name)


def form_name(gguf_name: str, form: GgufForm, sha256: str) -> str:
    """The file name of `form` of the shipped GGUF `gguf_name` whose checksum is `sha256`: the
    recipe's version and the shipped file's checksum in it, so a changed recipe or a catalogue
    update that keeps the file's name makes a new form, never reuses an old one."""
    if form == "shipped":
        return gguf_name
    return f"{form_stem(gguf_name, form)}{_VERSION}-{sha256[:12]}.gguf"


def form_stem(gguf_name: str, form: GgufForm) -> str:
    """What every version of `form_name`'s file name starts with."""
    return f"{gguf_name.removesuffix('.gguf')}.{form}-v"


def requantize(shipped: Path, out: Path, form: GgufForm) -> None:
    """Write `form` of the GGUF `shipped` to `out`: the same metadata and tokenizer, the layers'
    weights re-encoded."""
    import gguf
    from gguf.quants import dequantize, quantize

    if form != "q8_0":
        raise ValueError(f"no GGUF form {form!r}")
    types = gguf.GGMLQuantizationType
    target = types.Q8_0
    reader = gguf.GGUFReader(shipped)
    tensors = []
    for t in reader.tensors:
        data, kind = t.data, t.tensor_type
        recode = (
            len(t.shape) == 2
            and t.name not in _KEPT
            and kind not in (target, types.F32, types.F16, types.BF16)
            and int(t.shape[0]) % _BLOCK == 0  # each row a whole number of blocks
        )
        if recode:
            data, kind = quantize(dequantize(t.data, kind), target), target
        tensors.append((t.name, data, kind))
    write_like(reader, out, tensors)
    log.info("%s written from %s (%d bytes)", out.name, shipped.name, out.stat().st_size)


def write_like(reader: Any, out: Path, tensors: list[tuple[str, Any, Any]]) -> None:
    """Write to `out` a GGUF with the metadata (architecture, hyperparameters, tokenizer) of the
    file `reader` reads and `tensors`: (name, data as gguf-py holds it, its GGML type)."""
    import gguf

    arch = reader.fields[gguf.Keys.General.ARCHITECTURE].contents()
    writer = gguf.GGUFWriter(out, arch)
    for field in reader.fields.values():
        # the architecture and the file's own counts are written by the writer
        if field.name == gguf.Keys.General.ARCHITECTURE or field.name.startswith("GGUF."):
            continue
        value_type = field.types[0]
        sub = field.types[-1] if value_type == gguf.GGUFValueType.ARRAY else None
        writer.add_key_value(field.name, field.contents(), value_type, sub_type=sub)
    for name, data, kind in tensors:
        writer.add_tensor_info(name, data.shape, data.dtype, data.nbytes, kind)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_ti_data_to_file()
    for _, data, _ in tensors:
        writer.write_tensor_data(data)
    writer.close()
