"""`dragoman model prepare --verify` and `--force` on the tiny chunked model (conftest.py)
with a fake conversion: a prepared file overwritten with other bytes of the same size passes
start-up's size check, and is found here."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from dragoman.cli import main
from dragoman.models import cli as models_cli
from dragoman.models import prepare as prep
from dragoman.models.catalogue import CatalogueModel

OLDER = "prepared by an older version (no digests recorded)"


def _fake_convert(gguf: Path, out: Path, needs_chat_template: bool = True) -> None:
    out.mkdir()
    (out / "config.json").write_text("{}")
    (out / "model.safetensors").write_bytes(b"w" * 1000)


@pytest.fixture
def data(chunked: CatalogueModel, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The tiny model prepared (full weights) and its shipped GGUF kept beside it."""
    monkeypatch.setitem(prep.CATALOGUE, "tiny", chunked)
    monkeypatch.setattr(models_cli, "_llamacpp_gguf", lambda *a: None)
    monkeypatch.setattr(prep, "convert_gguf", _fake_convert)
    data = tmp_path / "data"
    assert _prepare(data) == 0
    prep.gguf_path("tiny", data)
    return data


def _prepare(data: Path, *flags: str) -> int:
    argv = ["model", "prepare", "--model", "tiny", "--weights", "full", "--data-dir", str(data)]
    return main([*argv, *flags])


def _lines(out: str) -> dict[str, str]:
    """`ok` or `BAD: why` by file name, from --verify's lines."""
    found = {}
    for line in out.splitlines():
        if line.startswith("ok "):
            found[Path(line.split()[-1]).name] = "ok"
        elif line.startswith("BAD "):
            path, _, why = line.removeprefix("BAD  ").partition(": ")
            found[Path(path).name] = f"BAD: {why}"
    return found


def test_the_digests_are_recorded_as_sha256sum_lines(data: Path) -> None:
    prepared = data / "models" / "tiny"
    lines = (prepared / prep.DIGESTS).read_text().splitlines()
    weights = hashlib.sha256(b"w" * 1000).hexdigest()
    assert f"{weights}  model.safetensors" in lines
    assert len(lines) == 2  # config.json and the weights: not the marker, not itself


def test_verify_finds_a_file_replaced_by_garbage_of_the_same_size(
    data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    capsys.readouterr()
    assert _prepare(data, "--verify") == 0
    got = capsys.readouterr()
    assert _lines(got.out) == {"config.json": "ok", "model.safetensors": "ok", "tiny.gguf": "ok"}
    assert got.out.splitlines()[-1].startswith("3 of 3 ok; ")
    assert " MB hashed in " in got.out.splitlines()[-1]

    weights = data / "models" / "tiny" / "model.safetensors"
    weights.write_bytes(b"x" * 1000)  # same size: start-up's check passes it
    gguf = data / "models" / "tiny.gguf"
    gguf.write_bytes(b"\0" * gguf.stat().st_size)
    assert prep.is_prepared(weights.parent, prep.CATALOGUE["tiny"].sha256)
    assert _prepare(data, "--verify") == 1
    got = capsys.readouterr()
    lines = _lines(got.out)
    assert lines["config.json"] == "ok"
    assert lines["model.safetensors"].startswith("BAD: sha256 ")
    assert lines["model.safetensors"].endswith(
        f", recorded {hashlib.sha256(b'w' * 1000).hexdigest()[:16]}..."
    )
    assert lines["tiny.gguf"].startswith("BAD: sha256 ")
    assert got.err == (
        "dragoman: error: tiny: 2 bad of 3 checked: run "
        "`dragoman model prepare --force --model tiny` to make them again\n"
    )

    assert _prepare(data, "--force") == 0  # made again, and the GGUF with it when needed
    assert weights.read_bytes() == b"w" * 1000
    assert not gguf.exists()
    prep.gguf_path("tiny", data)
    assert _prepare(data, "--verify") == 0


def test_a_missing_file_is_bad(data: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (data / "models" / "tiny" / "config.json").unlink()
    capsys.readouterr()
    assert _prepare(data, "--verify") == 1
    assert _lines(capsys.readouterr().out)["config.json"] == "BAD: missing"


def test_a_model_prepared_by_an_older_version_says_so(
    data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    prepared = data / "models" / "tiny"
    (prepared / prep.DIGESTS).unlink()  # as an older release left it: sizes only
    capsys.readouterr()
    assert _prepare(data, "--verify") == 1
    got = capsys.readouterr()
    assert f"BAD  {prepared}: {OLDER}\n" in got.out
    assert got.err.startswith(
        "dragoman: error: tiny: 1 prepared by an older version (no digests) of 2 checked: run "
    )
    assert _prepare(data, "--force") == 0
    assert (prepared / prep.DIGESTS).is_file()
    assert _prepare(data, "--verify") == 0


def test_a_re_encoded_gguf_records_its_digest(
    data: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(prep, "requantize", lambda shipped, out, form: out.write_bytes(b"q" * 64))
    form = prep.gguf_path("tiny", data, form="q8_0")
    capsys.readouterr()
    assert _prepare(data, "--verify") == 0
    assert _lines(capsys.readouterr().out)[form.name] == "ok"
    prep._checked(form).unlink()  # an older release noted its size only
    assert _prepare(data, "--verify") == 1
    assert _lines(capsys.readouterr().out)[form.name] == f"BAD: {OLDER}"
    form.write_bytes(b"r" * 64)
    prep._checked(form).write_text(hashlib.sha256(b"q" * 64).hexdigest() + "\n")
    assert _prepare(data, "--verify") == 1
    assert _lines(capsys.readouterr().out)[form.name].startswith("BAD: sha256 ")
    assert _prepare(data, "--force") == 0
    assert not form.exists() and not prep._checked(form).exists()


def test_verify_of_a_model_not_prepared_says_what_to_run(
    chunked: CatalogueModel,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setitem(prep.CATALOGUE, "tiny", chunked)
    assert _prepare(tmp_path, "--verify") == 1
    assert capsys.readouterr().err == (
        f"dragoman: error: tiny is not prepared in {tmp_path}: nothing to verify; "
        "run `dragoman model prepare`\n"
    )
    assert _prepare(tmp_path, "--verify", "--force") == 2
    assert not (tmp_path / "models").exists()  # verify makes nothing


def test_verify_reads_in_blocks(data: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Memory stays bounded: no read asks for more than a block, whatever the file's size."""
    import io

    asked: list[int] = []
    real_open = Path.open

    def watched(self: Path, mode: str = "r", *args: object, **kwargs: object) -> object:
        handle = real_open(self, mode, *args, **kwargs)  # type: ignore[call-overload]
        if "b" in mode and isinstance(handle, io.BufferedReader):
            read = handle.read

            def bounded(size: int = -1) -> bytes:
                asked.append(size)
                return read(size)

            handle.read = bounded  # type: ignore[method-assign]
        return handle

    monkeypatch.setattr(Path, "open", watched)
    assert _prepare(data, "--verify") == 0
    assert asked and all(0 < size <= prep._BLOCK for size in asked)


def _denied(monkeypatch: pytest.MonkeyPatch, method: str, paths: set[Path]) -> None:
    """Path.`method` fails as it does for a user without the permission (the tests run as root,
    for whom chmod denies nothing)."""
    real = getattr(Path, method)

    def denied(self: Path, *args: object, **kwargs: object) -> object:
        if self in paths:
            raise PermissionError(13, "Permission denied", str(self))
        return real(self, *args, **kwargs)

    monkeypatch.setattr(Path, method, denied)


def test_what_cannot_be_read_is_bad_not_a_traceback(
    data: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # A prepared directory the user may not search (its marker cannot be stat'ed), a
    # re-encoded form's note they may not read, the shipped GGUF they may not open.
    monkeypatch.setattr(prep, "requantize", lambda shipped, out, form: out.write_bytes(b"q" * 64))
    form = prep.gguf_path("tiny", data, form="q8_0")
    models = data / "models"
    _denied(monkeypatch, "stat", {models / "tiny" / prep.READY_MARKER})
    _denied(monkeypatch, "read_text", {prep._checked(form)})
    _denied(monkeypatch, "open", {models / "tiny.gguf"})
    capsys.readouterr()
    assert _prepare(data, "--verify") == 1
    got = capsys.readouterr()
    assert _lines(got.out) == {
        "tiny": "BAD: unreadable: Permission denied",
        form.name: f"BAD: {prep._checked(form).name} is unreadable: Permission denied",
        "tiny.gguf": "BAD: unreadable: Permission denied",
    }
    assert got.err.startswith("dragoman: error: tiny: 3 bad of 3 checked: run ")


def test_a_file_prepare_did_not_make_is_bad(data: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # vLLM loads every *.safetensors of a directory without an index: a stray copy beside the
    # weights is loaded with them.
    stray = data / "models" / "tiny" / "model (1).safetensors"
    stray.write_bytes(b"w" * 1000)
    capsys.readouterr()
    assert _prepare(data, "--verify") == 1
    got = capsys.readouterr()
    assert f"BAD  {stray}: not made by prepare (no digest recorded)\n" in got.out
    assert got.out.splitlines()[-1].startswith("3 of 4 ok; ")
    assert got.err.startswith("dragoman: error: tiny: 1 bad of 4 checked: run ")
    stray.unlink()
    assert _prepare(data, "--verify") == 0


def test_a_directory_an_interrupted_force_left_is_bad(
    data: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # --force removes the marker first, then the files: interrupted between, the directory is
    # not a prepared model, and --verify said "1 of 1 ok" (the GGUF) and exited 0.
    from dragoman.models import verify

    def interrupted(path: Path, *args: object, **kwargs: object) -> None:
        (Path(path) / "config.json").unlink()
        raise KeyboardInterrupt

    with monkeypatch.context() as patched:
        patched.setattr(verify.shutil, "rmtree", interrupted)
        assert _prepare(data, "--force") == 130
    prepared = data / "models" / "tiny"
    assert not (prepared / prep.READY_MARKER).exists()
    capsys.readouterr()
    assert _prepare(data, "--verify") == 1
    got = capsys.readouterr()
    assert _lines(got.out) == {"tiny": f"BAD: {verify.UNFINISHED}", "tiny.gguf": "ok"}
    assert got.err.startswith("dragoman: error: tiny: 1 bad of 2 checked: run ")
    assert _prepare(data) == 0  # prepared again, over what was left
    assert _prepare(data, "--verify") == 0


def test_force_without_the_model_packages_removes_nothing(
    data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # --force removes the kept GGUF too, so everything is made again from the packages: with
    # one uninstalled (a slim image, the model prepared elsewhere), --force deleted a working
    # model and then failed to make it.
    import importlib
    import shutil
    import sys

    shutil.rmtree(tmp_path / "site" / "fakepart2")
    sys.modules.pop("fakepart2", None)
    importlib.invalidate_caches()
    before = sorted(p.relative_to(data) for p in data.rglob("*") if p.is_file())
    capsys.readouterr()
    assert _prepare(data, "--force") == 1
    assert capsys.readouterr().err == (
        "dragoman: error: package 'fakepart2' holding part of tiny is not installed; install "
        "it with: pip install fakepart1 fakepart2 fakepart3; --force removed nothing\n"
    )
    assert sorted(p.relative_to(data) for p in data.rglob("*") if p.is_file()) == before
    assert _prepare(data, "--verify") == 0


def test_a_re_encoded_gguf_killed_after_its_rename_keeps_its_digest(
    data: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Its notes were written after the rename: a run stopped between left a form that start-up
    # takes as whole and --verify called "prepared by an older version" until a --force.
    monkeypatch.setattr(prep, "requantize", lambda shipped, out, form: out.write_bytes(b"q" * 64))
    made = prep._made

    def stopped_after(*args: object, **kwargs: object) -> Path:
        made(*args, **kwargs)  # type: ignore[arg-type]
        raise KeyboardInterrupt

    with monkeypatch.context() as patched:
        patched.setattr(prep, "_made", stopped_after)
        with pytest.raises(KeyboardInterrupt):
            prep.gguf_path("tiny", data, form="q8_0")
    form = prep.gguf_path("tiny", data, form="q8_0")  # whole: taken as it is
    capsys.readouterr()
    assert _prepare(data, "--verify") == 0
    assert _lines(capsys.readouterr().out)[form.name] == "ok"


def test_each_line_says_what_is_wrong_and_the_error_line_what_to_run_for_this_model(
    data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The lines said "run `dragoman model prepare --force`": for a model other than the
    # default (tiny here), that command remade the default model, not this one.
    (data / "models" / "tiny" / prep.DIGESTS).unlink()
    (data / "models" / "tiny.gguf").write_bytes(b"x")
    capsys.readouterr()
    assert _prepare(data, "--verify") == 1
    got = capsys.readouterr()
    assert "dragoman model prepare" not in got.out
    run = "run `dragoman model prepare --force --model tiny` to make them again\n"
    assert got.err.endswith(run)
