"""The Q8_0 form of a GGUF, on tiny GGUF files written here with gguf-py; llama.cpp running the
real model's form is in the integration tier (tests/integration/test_llamacpp_live.py)."""

from __future__ import annotations

import hashlib
import sys
import threading
from pathlib import Path

import gguf
import numpy as np
import pytest
from gguf.quants import dequantize, quantize

from dragoman.errors import ModelError
from dragoman.models import prepare as prep
from dragoman.models.catalogue import CatalogueModel, Chunk
from dragoman.models.gguf_forms import form_name, requantize

Q = gguf.GGMLQuantizationType


def _write(path: Path, tensors: dict[str, tuple[np.ndarray, Q]]) -> None:
    """A GGUF with a little metadata and `tensors` (float values, stored as the type given)."""
    w = gguf.GGUFWriter(path, "qwen2")
    w.add_context_length(64)
    w.add_string("tokenizer.ggml.model", "gpt2")
    w.add_array("tokenizer.ggml.tokens", ["a", "b", "c"])
    for name, (values, kind) in tensors.items():
        data = values if kind in (Q.F32, Q.F16) else quantize(values, kind)
        if kind == Q.F16:
            data = values.astype(np.float16)
        w.add_tensor(name, data, raw_dtype=kind)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def _values(rows: int, cols: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((rows, cols)).astype(np.float32)


def test_requantize_recodes_the_layers_and_keeps_the_rest(tmp_path: Path) -> None:
    shipped, out = tmp_path / "m.gguf", tmp_path / "m.q8_0.gguf"
    layers = {
        "blk.0.ffn_up.weight": (_values(64, 128, 1), Q.Q5_0),
        "blk.0.ffn_down.weight": (_values(64, 128, 8), Q.Q4_0),
        "blk.0.attn_v.weight": (_values(32, 128, 2), Q.Q8_0),
        "blk.0.attn_q.weight": (_values(32, 64, 3), Q.F16),
        "token_embd.weight": (_values(16, 64, 5), Q.Q5_0),
        "output.weight": (_values(16, 64, 6), Q.Q5_0),
        "blk.0.attn_norm.weight": (_values(1, 128, 7)[0], Q.F32),
    }
    _write(shipped, layers)
    requantize(shipped, out, "q8_0")
    before, after = gguf.GGUFReader(shipped), gguf.GGUFReader(out)
    types = {t.name: t.tensor_type for t in after.tensors}
    assert types == {
        "blk.0.ffn_up.weight": Q.Q8_0,
        "blk.0.ffn_down.weight": Q.Q8_0,
        "blk.0.attn_v.weight": Q.Q8_0,  # already Q8_0: kept as it is
        "blk.0.attn_q.weight": Q.F16,  # unquantized stays so
        "token_embd.weight": Q.Q5_0,  # looked up, never multiplied
        "output.weight": Q.Q8_0,  # the head is multiplied every token
        "blk.0.attn_norm.weight": Q.F32,
    }
    old = {t.name: t for t in before.tensors}
    for t in after.tensors:
        was = old[t.name]
        values = dequantize(t.data, t.tensor_type)
        original = dequantize(was.data, was.tensor_type)
        assert values.shape == original.shape
        if t.tensor_type == was.tensor_type:
            assert np.array_equal(t.data, was.data), t.name
        else:  # 8 bits hold the shipped 4-5-bit values almost exactly
            rel = np.sqrt(((values - original) ** 2).mean() / (original**2).mean())
            assert 0 < rel < 0.01, (t.name, rel)
    for key in ("qwen2.context_length", "tokenizer.ggml.model", "tokenizer.ggml.tokens"):
        assert after.fields[key].contents() == before.fields[key].contents()
    assert after.fields["general.architecture"].contents() == "qwen2"


def test_requantize_knows_only_its_forms(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="no GGUF form"):
        requantize(tmp_path / "a.gguf", tmp_path / "b.gguf", "shipped")


def test_gguf_path_makes_a_form_once_beside_the_shipped_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shipped = tmp_path / "src.gguf"
    _write(shipped, {"blk.0.ffn_up.weight": (_values(64, 128), Q.Q5_0)})
    blob = shipped.read_bytes()
    pkg = tmp_path / "site" / "fakegguf"
    (pkg / "data").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "data" / "m.gguf").write_bytes(blob)
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    sys.modules.pop("fakegguf", None)
    entry = CatalogueModel(
        name="tiny",
        description="",
        gguf_name="tiny.gguf",
        chunks=(Chunk("fakegguf", "data/m.gguf"),),
        size=len(blob),
        sha256=hashlib.sha256(blob).hexdigest(),
        languages=("en",),
    )
    monkeypatch.setitem(prep.CATALOGUE, "tiny", entry)
    data = tmp_path / "data"
    sha = entry.sha256[:12]
    # what an older recipe, an older shipped file and a killed maker left
    (data / "models").mkdir(parents=True)
    killed = f".tiny.q8_0-v1-{sha}.gguf-k"
    left_over = ("tiny.q8_0-v0-0123456789ab.gguf", "tiny.q8_0-v1.gguf", killed)
    for left in left_over:
        (data / "models" / left).write_bytes(b"old")
    made = prep.gguf_path("tiny", data, form="q8_0")
    assert made == data / "models" / form_name("tiny.gguf", "q8_0", entry.sha256)
    assert made.name == f"tiny.q8_0-v1-{sha}.gguf"
    assert [t.tensor_type for t in gguf.GGUFReader(made).tensors] == [Q.Q8_0]
    # the shipped file is kept beside it (with its checksum's note and the lock files);
    # neither is made again
    assert sorted(p.name for p in made.parent.iterdir()) == sorted(
        [
            "tiny.gguf",
            made.name,
            ".tiny.gguf.lock",
            ".tiny.gguf.sha256",
            f".{made.name}.lock",
            f".{made.name}.size",
            f".{made.name}.sha256",  # its digest, for `model prepare --verify`
        ]
    )
    calls: list[object] = []
    monkeypatch.setattr(prep, "requantize", lambda *a: calls.append(a))
    monkeypatch.setattr(prep, "assemble", lambda *a: calls.append(a))
    assert prep.gguf_path("tiny", data, form="q8_0") == made
    assert prep.gguf_path("tiny", data) == data / "models" / "tiny.gguf"
    assert calls == []
    # A form cut short (a copy stopped midway) is made again, not handed to llama.cpp.
    size = made.stat().st_size
    with made.open("r+b") as f:
        f.truncate(size // 2)
    monkeypatch.undo()
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    monkeypatch.setitem(prep.CATALOGUE, "tiny", entry)
    assert prep.gguf_path("tiny", data, form="q8_0") == made
    assert made.stat().st_size == size
    assert [t.tensor_type for t in gguf.GGUFReader(made).tensors] == [Q.Q8_0]


def test_gguf_path_leaves_no_partial_form_when_making_it_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(shipped: Path, out: Path, form: str) -> None:
        out.write_bytes(b"half")
        raise OSError("disk full")

    data = tmp_path / "data"
    (data / "models").mkdir(parents=True)
    shipped = data / "models" / "tiny.gguf"
    shipped.write_bytes(b"x")
    monkeypatch.setattr(prep, "_cached_gguf", lambda entry, d: shipped)
    monkeypatch.setattr(prep, "requantize", broken)
    monkeypatch.setitem(prep.CATALOGUE, "tiny", prep.CATALOGUE[next(iter(prep.CATALOGUE))])
    with pytest.raises(ModelError, match=r"^cannot write .*\.gguf: disk full$"):
        prep.gguf_path("tiny", data, form="q8_0")
    assert [p.name for p in (data / "models").iterdir() if p.suffix != ".lock"] == ["tiny.gguf"]


def test_one_process_makes_a_form_and_the_one_that_waited_finds_it_made(
    tmp_path: Path,
) -> None:
    """Two starts at once (two pods on one volume): the second waits on the lock and uses the
    first's file instead of making it again."""
    final = tmp_path / "models" / "m.q8_0-v1-abc.gguf"
    entered, release = threading.Event(), threading.Event()
    made: list[str] = []

    def slow(tmp: Path) -> None:
        made.append("first")
        entered.set()
        assert release.wait(30)
        tmp.write_bytes(b"form")

    first = threading.Thread(target=prep._made, args=(final, slow))
    first.start()
    assert entered.wait(30)
    second: list[Path] = []
    waiter = threading.Thread(
        target=lambda: second.append(prep._made(final, lambda tmp: made.append("second")))
    )
    waiter.start()
    try:
        waiter.join(0.2)
        assert waiter.is_alive()  # held by the lock, not making its own
    finally:
        release.set()
    first.join(30)
    waiter.join(30)
    assert second == [final] and made == ["first"] and final.read_bytes() == b"form"


def test_model_prepare_makes_the_llama_cpp_gguf_only_where_llama_cpp_serves(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from dragoman.engine import choice
    from dragoman.engine.host_defaults import Choice
    from dragoman.models import cli
    from dragoman.settings import ModelSettings

    made: list[tuple[str, str]] = []
    monkeypatch.setattr(
        prep, "gguf_path", lambda name, data, form="shipped": made.append((name, form)) or data
    )
    settings = ModelSettings(data_dir=tmp_path)
    for engine, expected in (("continuous", []), ("llama-cpp", [(settings.model, "q8_0")])):
        made.clear()
        monkeypatch.setattr(
            choice, "resolve_architecture", lambda s, e=engine: (s, Choice(e, "test"))
        )
        cli._llamacpp_gguf(settings, cli.Console(stderr=True))
        assert made == expected, engine
