"""Model preparation on small chunk packages made here; conversion itself runs in the
integration tier (scripts/test prepares the real default model before pytest)."""

from __future__ import annotations

import hashlib
import threading
import time
from pathlib import Path

import pytest

from dragoman.errors import ModelError
from dragoman.models import prepare as prep
from dragoman.models.catalogue import CatalogueModel, Chunk


def test_assemble_concatenates_in_order_and_verifies(
    chunked: CatalogueModel, tmp_path: Path
) -> None:
    seen: list[tuple[str, int, int]] = []
    out = prep.assemble(chunked, tmp_path / "m.gguf", lambda *a: seen.append(a))
    assert out.read_bytes() == bytes(range(256)) * 100
    assert seen[-1] == ("assemble", chunked.size, chunked.size)


def test_assemble_refuses_wrong_checksum(chunked: CatalogueModel, tmp_path: Path) -> None:
    bad = CatalogueModel(**{**chunked.__dict__, "sha256": "0" * 64})
    with pytest.raises(ModelError, match="does not match"):
        prep.assemble(bad, tmp_path / "m.gguf")


def test_assemble_refuses_wrong_size(chunked: CatalogueModel, tmp_path: Path) -> None:
    bad = CatalogueModel(**{**chunked.__dict__, "size": chunked.size + 1})
    with pytest.raises(ModelError, match="expected"):
        prep.assemble(bad, tmp_path / "m.gguf")


def test_missing_chunk_package_names_the_install(chunked: CatalogueModel) -> None:
    bad = CatalogueModel(
        **{**chunked.__dict__, "chunks": (*chunked.chunks, Chunk("nosuchpart9", "x.bin"))}
    )
    with pytest.raises(ModelError, match="pip install fakepart1 fakepart2 fakepart3"):
        prep.chunk_files(bad)


def test_prepare_is_atomic_and_idempotent(
    chunked: CatalogueModel, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(prep.CATALOGUE, "tiny", chunked)
    calls: list[Path] = []

    def fake_convert(gguf: Path, out: Path, needs_chat_template: bool = True) -> None:
        calls.append(gguf)
        out.mkdir()
        (out / "config.json").write_text("{}")

    def failing_convert(gguf: Path, out: Path, needs_chat_template: bool = True) -> None:
        out.mkdir()
        (out / "config.json").write_text("{}")
        raise ModelError("conversion failed")

    data = tmp_path / "data"
    monkeypatch.setattr(prep, "convert_gguf", failing_convert)
    with pytest.raises(ModelError):
        prep.prepare("tiny", data)
    assert not prep.model_dir(data, "tiny").exists()
    # no temp directory left behind (the lock file stays)
    assert [p.name for p in (data / "models").iterdir()] == [".tiny.lock"]

    monkeypatch.setattr(prep, "convert_gguf", fake_convert)
    path = prep.prepare("tiny", data)
    assert prep.is_prepared(path)
    assert prep.prepare("tiny", data) == path
    assert len(calls) == 1


def test_prepare_quantized_makes_the_full_weights_first_and_keeps_both(
    chunked: CatalogueModel, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from dragoman.models import quantize

    monkeypatch.setitem(prep.CATALOGUE, "tiny", chunked)
    made: list[tuple[str, str]] = []

    def fake_convert(gguf: Path, out: Path, needs_chat_template: bool = True) -> None:
        out.mkdir()
        (out / "config.json").write_text("{}")

    def fake_quantize(gguf: Path, prepared: Path, out: Path, form: str, **_: object) -> None:
        assert prep.is_prepared(prepared)  # quantized forms read the full weights' files
        assert gguf.read_bytes() == bytes(range(256)) * 100
        made.append((prepared.name, form))
        out.mkdir()
        (out / "config.json").write_text('{"quantization_config": {}}')

    monkeypatch.setattr(prep, "convert_gguf", fake_convert)
    monkeypatch.setattr(quantize, "quantize", fake_quantize)
    data = tmp_path / "data"
    path = prep.prepare("tiny", data, weights="w8a8")
    assert path == data / "models" / "tiny.w8a8"
    assert prep.is_prepared(path) and prep.is_prepared(prep.model_dir(data, "tiny"))
    assert prep.resolve_model("tiny", data, "w8a8") == str(path)
    assert prep.prepare("tiny", data, weights="w8a8") == path
    assert made == [("tiny", "w8a8")]
    with pytest.raises(ModelError, match="unknown weights 'w2'"):
        prep.prepare("tiny", data, weights="w2")
    assert sorted(p.name for p in (data / "models").iterdir()) == [
        ".tiny.lock",
        "tiny",
        "tiny.w8a8",
    ]


def test_prepare_quantized_reads_the_cached_gguf_instead_of_assembling_again(
    chunked: CatalogueModel, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from dragoman.models import quantize

    monkeypatch.setitem(prep.CATALOGUE, "tiny", chunked)
    data = tmp_path / "data"
    cached = prep.gguf_path("tiny", data)
    read: list[Path] = []

    def fake_convert(gguf: Path, out: Path, needs_chat_template: bool = True) -> None:
        read.append(gguf)
        out.mkdir()
        (out / "config.json").write_text("{}")

    def fake_quantize(gguf: Path, prepared: Path, out: Path, form: str, **_: object) -> None:
        read.append(gguf)
        out.mkdir()
        (out / "config.json").write_text('{"quantization_config": {}}')

    def no_assembly(*args: object) -> Path:
        raise AssertionError("assembled again though the GGUF is cached")

    monkeypatch.setattr(prep, "convert_gguf", fake_convert)
    monkeypatch.setattr(quantize, "quantize", fake_quantize)
    monkeypatch.setattr(prep, "assemble", no_assembly)
    prep.prepare("tiny", data)
    assert prep.prepare("tiny", data, weights="w8a8") == data / "models" / "tiny.w8a8"
    assert read == [cached, cached]
    assert cached.read_bytes() == bytes(range(256)) * 100  # kept, for llama.cpp


def test_prepare_assembles_again_when_the_cached_gguf_is_not_whole(
    chunked: CatalogueModel, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(prep.CATALOGUE, "tiny", chunked)
    data = tmp_path / "data"
    (data / "models").mkdir(parents=True)
    (data / "models" / "tiny.gguf").write_bytes(b"cut short")

    def fake_convert(gguf: Path, out: Path, needs_chat_template: bool = True) -> None:
        assert gguf.read_bytes() == bytes(range(256)) * 100
        out.mkdir()
        (out / "config.json").write_text("{}")

    monkeypatch.setattr(prep, "convert_gguf", fake_convert)
    assert prep.is_prepared(prep.prepare("tiny", data))


def test_resolve_model_unprepared_quantized_form_names_the_flag(tmp_path: Path) -> None:
    with pytest.raises(ModelError, match="run `dragoman model prepare --weights w8a8`"):
        prep.resolve_model("qwen2.5-coder-0.5b-instruct", tmp_path, "w8a8")


def test_unknown_catalogue_name(tmp_path: Path) -> None:
    with pytest.raises(ModelError, match="unknown model 'nope'"):
        prep.prepare("nope", tmp_path)


def test_resolve_model_unprepared_default_says_what_to_run(tmp_path: Path) -> None:
    with pytest.raises(ModelError, match="run `dragoman model prepare`"):
        prep.resolve_model("qwen2.5-coder-0.5b-instruct", tmp_path)


def test_resolve_model_local_dir_needs_config(tmp_path: Path) -> None:
    with pytest.raises(ModelError, match=r"no config\.json"):
        prep.resolve_model(str(tmp_path), tmp_path)
    (tmp_path / "config.json").write_text("{}")
    assert prep.resolve_model(str(tmp_path), tmp_path) == str(tmp_path.resolve())


def test_resolve_model_hub_id_passes_through(tmp_path: Path) -> None:
    assert (
        prep.resolve_model("Qwen/Qwen2.5-0.5B-Instruct", tmp_path) == "Qwen/Qwen2.5-0.5B-Instruct"
    )


def test_gguf_path_assembles_once_beside_the_models(
    chunked: CatalogueModel, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(prep.CATALOGUE, "tiny", chunked)
    data = tmp_path / "data"
    first = prep.gguf_path("tiny", data)
    assert first == data / "models" / "tiny.gguf"
    assert first.read_bytes() == bytes(range(256)) * 100
    calls: list[object] = []
    monkeypatch.setattr(prep, "assemble", lambda *a: calls.append(a))
    assert prep.gguf_path("tiny", data) == first
    assert calls == []  # cached: not assembled again
    # no temporary left (the lock file stays)
    assert sorted(p.name for p in first.parent.iterdir()) == [
        ".tiny.gguf.lock",
        ".tiny.gguf.sha256",
        "tiny.gguf",
    ]


def test_a_catalogue_update_keeping_name_and_size_is_made_again(
    chunked: CatalogueModel, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(prep.CATALOGUE, "tiny", chunked)
    converted: list[bytes] = []

    def fake_convert(gguf: Path, out: Path, needs_chat_template: bool = True) -> None:
        converted.append(gguf.read_bytes())
        out.mkdir()
        (out / "config.json").write_text("{}")

    monkeypatch.setattr(prep, "convert_gguf", fake_convert)
    data = tmp_path / "data"
    gguf = prep.gguf_path("tiny", data)
    prepared = prep.prepare("tiny", data)
    # The next release ships other bytes of the same size under the same name.
    new = bytes(reversed(bytes(range(256)))) * 100
    parts = (new[:9000], new[9000:20000], new[20000:])
    for chunk, part in zip(prep.chunk_files(chunked), parts, strict=True):
        chunk.write_bytes(part)
    update = CatalogueModel(**{**chunked.__dict__, "sha256": hashlib.sha256(new).hexdigest()})
    monkeypatch.setitem(prep.CATALOGUE, "tiny", update)
    assert not prep.is_prepared(prepared, update.sha256)
    with pytest.raises(ModelError, match="not prepared"):
        prep.resolve_model("tiny", data)
    assert prep.gguf_path("tiny", data) == gguf and gguf.read_bytes() == new
    assert prep.prepare("tiny", data) == prepared
    assert converted[-1] == new and len(converted) == 2
    assert prep.resolve_model("tiny", data) == str(prepared)


def test_a_cached_gguf_of_an_older_release_is_hashed_once_and_noted(
    chunked: CatalogueModel, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(prep.CATALOGUE, "tiny", chunked)
    data = tmp_path / "data"
    (data / "models").mkdir(parents=True)
    kept = data / "models" / "tiny.gguf"
    kept.write_bytes(bytes(range(256)) * 100)  # assembled by a release that wrote no note
    monkeypatch.setattr(prep, "assemble", lambda *a: pytest.fail("assembled a good file again"))
    assert prep.gguf_path("tiny", data) == kept
    assert (data / "models" / ".tiny.gguf.sha256").read_text().strip() == chunked.sha256
    hashed: list[Path] = []
    monkeypatch.setattr(prep, "_sha256", lambda path: hashed.append(path) or "")
    assert prep.gguf_path("tiny", data) == kept
    assert hashed == []  # noted: not hashed at each start


def test_gguf_path_leaves_no_partial_file_when_assembly_fails(
    chunked: CatalogueModel, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(
        prep.CATALOGUE, "tiny", CatalogueModel(**{**chunked.__dict__, "sha256": "0" * 64})
    )
    with pytest.raises(ModelError, match="does not match"):
        prep.gguf_path("tiny", tmp_path)
    assert [p.name for p in (tmp_path / "models").iterdir()] == [".tiny.gguf.lock"]


def test_gguf_path_refuses_a_model_outside_the_catalogue(tmp_path: Path) -> None:
    with pytest.raises(ModelError, match="not in the catalogue"):
        prep.gguf_path("/some/dir", tmp_path)


def _fake_convert(gguf: Path, out: Path, needs_chat_template: bool = True) -> None:
    out.mkdir()
    (out / "config.json").write_text("{}")
    (out / "model.safetensors").write_bytes(b"w" * 1000)


def test_prepare_removes_what_a_killed_run_left(
    chunked: CatalogueModel, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A SIGKILL (or a SIGTERM before it was handled) skips the clean-up: each run left its
    # work directory, a GGUF and a converted model in size, and the next made another.
    monkeypatch.setitem(prep.CATALOGUE, "tiny", chunked)
    monkeypatch.setattr(prep, "convert_gguf", _fake_convert)
    models = tmp_path / "data" / "models"
    left = [models / ".tiny.partial-ab12cd_e", models / ".tiny-q1w2e3r4"]  # this and older
    other = models / ".tinier.partial-ab12cd_e"  # another model's: not ours to remove
    for d in (*left, other):
        d.mkdir(parents=True)
        (d / "tiny.gguf").write_bytes(b"half")
    prep.prepare("tiny", tmp_path / "data")
    assert not any(d.exists() for d in left) and other.exists()
    # A run killed after the model was made (one making another form) is tidied at the next.
    left[0].mkdir()
    prep.prepare("tiny", tmp_path / "data")
    assert not left[0].exists()


def test_prepare_leaves_the_work_of_a_run_in_progress(
    chunked: CatalogueModel, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(prep.CATALOGUE, "tiny", chunked)
    monkeypatch.setattr(prep, "convert_gguf", _fake_convert)
    data = tmp_path / "data"
    prep.prepare("tiny", data)
    busy = data / "models" / ".tiny.partial-inflight"
    busy.mkdir()
    with open(data / "models" / ".tiny.lock", "a") as lock:  # another process preparing
        import fcntl

        fcntl.flock(lock, fcntl.LOCK_EX)
        prep.prepare("tiny", data)
    assert busy.exists()


def test_two_prepares_at_once_make_the_model_once(
    chunked: CatalogueModel,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    # Both used to convert, and the second to finish removed the first's finished directory
    # (which a server may have been loading) or failed to rename over it.
    monkeypatch.setitem(prep.CATALOGUE, "tiny", chunked)
    calls: list[Path] = []

    def slow_convert(gguf: Path, out: Path, needs_chat_template: bool = True) -> None:
        calls.append(out)
        # Until the other run waits for the lock (a fixed 0.3 s let a slow host start it
        # after this one had finished: it found the model made and never waited).
        end = time.monotonic() + 60
        while "waiting for another process" not in caplog.text and time.monotonic() < end:
            time.sleep(0.01)
        _fake_convert(gguf, out)

    monkeypatch.setattr(prep, "convert_gguf", slow_convert)
    data = tmp_path / "data"
    results: list[Path | BaseException] = []

    def run() -> None:
        try:
            results.append(prep.prepare("tiny", data))
        except BaseException as exc:  # reported by the assertion below
            results.append(exc)

    threads = [threading.Thread(target=run) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [data / "models" / "tiny"] * 2
    assert len(calls) == 1
    assert "waiting for another process, which holds" in caplog.text
    assert prep.is_prepared(data / "models" / "tiny")


def test_a_damaged_prepared_model_is_not_ready_and_is_made_again(
    chunked: CatalogueModel, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(prep.CATALOGUE, "tiny", chunked)
    calls: list[Path] = []

    def convert(gguf: Path, out: Path, needs_chat_template: bool = True) -> None:
        calls.append(out)
        _fake_convert(gguf, out)

    monkeypatch.setattr(prep, "convert_gguf", convert)
    data = tmp_path / "data"
    path = prep.prepare("tiny", data)
    weights = path / "model.safetensors"
    with weights.open("r+b") as f:  # cut short: a full disk, a copy stopped midway
        f.truncate(400)
    assert not prep.is_prepared(path, chunked.sha256)
    with pytest.raises(ModelError) as exc:
        prep.resolve_model("tiny", data)
    assert exc.value.message == (
        f"model 'tiny' (full weights) is damaged in {path} (model.safetensors has 400 bytes, "
        "not 1000); run `dragoman model prepare`"
    )
    assert prep.prepare("tiny", data) == path and len(calls) == 2
    assert weights.stat().st_size == 1000
    weights.unlink()
    assert prep.damage(path) == "model.safetensors is missing"
    assert prep.prepare("tiny", data) == path and len(calls) == 3


def test_a_model_prepared_by_an_older_release_stays_ready(tmp_path: Path) -> None:
    # Its marker holds the checksum only: no sizes to check, so it is taken as it was.
    (tmp_path / "config.json").write_text("{}")
    (tmp_path / prep.READY_MARKER).write_text("abc\n")
    assert prep.is_prepared(tmp_path, "abc")
    assert not prep.is_prepared(tmp_path, "abd")


def test_a_marker_overwritten_with_garbage_is_not_ready(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text("{}")
    (tmp_path / prep.READY_MARKER).write_bytes(b"\xff\xfe\x00garbage")
    assert not prep.is_prepared(tmp_path, "abc")
    assert prep.damage(tmp_path) == f"{prep.READY_MARKER} is unreadable"


def test_unknown_weights_are_refused_before_any_work(
    chunked: CatalogueModel, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(prep.CATALOGUE, "tiny", chunked)
    monkeypatch.setattr(prep, "convert_gguf", lambda *a, **k: pytest.fail("converted"))
    with pytest.raises(ModelError, match="unknown weights 'w2'"):
        prep.prepare("tiny", tmp_path, weights="w2")
