"""`dragoman model prepare` at the command line: exit statuses and one-line errors, on the
tiny chunked model (conftest.py) with a fake conversion."""

from __future__ import annotations

import errno
import os
import signal
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from dragoman.cli import main
from dragoman.models import cli as models_cli
from dragoman.models import prepare as prep
from dragoman.models.catalogue import CatalogueModel


@pytest.fixture
def tiny(chunked: CatalogueModel, monkeypatch: pytest.MonkeyPatch) -> CatalogueModel:
    monkeypatch.setitem(prep.CATALOGUE, "tiny", chunked)
    monkeypatch.setattr(models_cli, "_llamacpp_gguf", lambda *a: None)
    return chunked


def _prepare(data: Path) -> int:
    return main(
        ["model", "prepare", "--model", "tiny", "--weights", "full", "--data-dir", str(data)]
    )


def _filling_the_disk(error: Exception) -> Callable[..., None]:
    """A conversion that makes its output folder, then fails with `error` writing the weights
    into it."""

    def convert(gguf: Path, out: Path, needs_chat_template: bool = True) -> None:
        out.mkdir()
        raise error

    return convert


def test_an_unknown_model_is_wrong_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["model", "prepare", "--model", "gemma-3-270M", "--data-dir", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("dragoman: error: 'gemma-3-270M' is not in the catalogue (")
    assert "gemma-3-270m" in err and len(err.splitlines()) == 1


def test_a_data_dir_that_cannot_be_written_is_wrong_input(
    tiny: CatalogueModel, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "file").write_text("")
    assert _prepare(tmp_path / "file" / "data") == 2
    err = capsys.readouterr().err
    assert (
        err
        == f"dragoman: error: --data-dir {tmp_path}/file/data: {tmp_path}/file is not a folder\n"
    )


def test_a_full_disk_is_one_line_and_leaves_nothing(
    tiny: CatalogueModel,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    full = OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), "model.safetensors")
    monkeypatch.setattr(prep, "convert_gguf", _filling_the_disk(full))
    data = tmp_path / "data"
    assert _prepare(data) == 1
    err = capsys.readouterr().err
    assert err.endswith(
        f"dragoman: error: cannot prepare tiny in {data}: No space left on device\n"
    )
    assert [p.name for p in (data / "models").iterdir()] == [".tiny.lock"]


def test_sigterm_stops_it_as_ctrl_c_does(
    tiny: CatalogueModel, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # SIGTERM's default action ended the process at once, its work directory left behind.
    def stopped(gguf: Path, out: Path, needs_chat_template: bool = True) -> None:
        out.mkdir()
        (out / "model.safetensors").write_bytes(b"half")
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(5)

    monkeypatch.setattr(prep, "convert_gguf", stopped)
    data = tmp_path / "data"
    before = signal.getsignal(signal.SIGTERM)  # another test's library may have set one
    assert _prepare(data) == 130
    assert [p.name for p in (data / "models").iterdir()] == [".tiny.lock"]
    assert signal.getsignal(signal.SIGTERM) == before


def test_a_run_on_a_prepared_model_removes_what_a_killed_run_left(
    tiny: CatalogueModel, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def convert(gguf: Path, out: Path, needs_chat_template: bool = True) -> None:
        out.mkdir()
        (out / "config.json").write_text("{}")

    monkeypatch.setattr(prep, "convert_gguf", convert)
    data = tmp_path / "data"
    assert _prepare(data) == 0
    left = data / "models" / ".tiny.partial-k1lled00"
    left.mkdir()
    assert _prepare(data) == 0
    assert not left.exists()


def test_a_disk_that_fills_while_the_weights_are_written_is_one_line(
    tiny: CatalogueModel,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Seen on a 600 MB tmpfs: safetensors raises its own error type, not OSError.
    from safetensors import SafetensorError

    full = SafetensorError(
        "Error while serializing: I/O error: No space left on device (os error 28)"
    )
    monkeypatch.setattr(prep, "convert_gguf", _filling_the_disk(full))
    data = tmp_path / "data"
    assert _prepare(data) == 1
    assert capsys.readouterr().err.endswith(
        f"dragoman: error: cannot prepare tiny in {data}: Error while serializing: I/O error: "
        "No space left on device (os error 28)\n"
    )
    assert [p.name for p in (data / "models").iterdir()] == [".tiny.lock"]


def test_prepare_leaves_an_ignored_sighup_ignored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Under nohup a closed terminal's SIGHUP stopped a prepare as Ctrl-C does.
    seen: list[object] = []
    monkeypatch.setattr(
        models_cli, "_prepare", lambda s: seen.append(signal.getsignal(signal.SIGHUP))
    )
    previous = signal.signal(signal.SIGHUP, signal.SIG_IGN)
    try:
        assert _prepare(tmp_path) == 0
        assert signal.getsignal(signal.SIGHUP) == signal.SIG_IGN
    finally:
        signal.signal(signal.SIGHUP, previous)
    assert seen == [signal.SIG_IGN]
