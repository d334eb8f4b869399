"""`dragoman translate FILE`: through a real server's /v1/documents (uvicorn on 127.0.0.1, the
echo engine), and with no server through an engine started here (the echo engine in its
place); wrong input exits 2 before any engine starts."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from dragoman.cli import main
from tests.unit.api.test_document_clients import TEXT, running
from tests.unit.test_cli_translate import local_echo, no_server


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with running(tmp_path_factory.mktemp("served")) as url:
        yield url


def test_a_file_is_translated_by_the_server_beside_itself(
    server: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "notes.txt"
    source.write_text(TEXT)
    assert main(["translate", str(source), "--to", "de", "--server", server]) == 0
    out = tmp_path / "notes.de.txt"
    assert out.read_text() == TEXT  # the echo engine answers each sentence with itself
    assert capsys.readouterr().out == f"{out}\n"
    chosen = tmp_path / "elsewhere.txt"
    assert (
        main(["translate", str(source), "--to", "fr", "-o", str(chosen), "--server", server]) == 0
    )
    assert chosen.read_text() == TEXT


@pytest.mark.parametrize(
    ("name", "data", "says"),
    [
        ("report.pdf", b"%PDF-1.7", "not a supported file type; supported: "),
        ("notes.txt", b"\xff\xfe\x00", "not UTF-8"),
    ],
)
def test_a_file_the_server_refuses_exits_2(
    server: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    name: str,
    data: bytes,
    says: str,
) -> None:
    source = tmp_path / name
    source.write_bytes(data)
    assert main(["translate", str(source), "--to", "de", "--server", server]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"dragoman: error: {source}: ") and says in err


def test_without_a_server_the_file_is_translated_here(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    started: list[Any] = []
    local_echo(monkeypatch, started.append)
    monkeypatch.setenv("DRAGOMAN_RETRY_INVALID", "0")
    source = tmp_path / "notes.txt"
    source.write_text(TEXT)
    argv = ["translate", str(source), "--to", "fr", "--source", "en", "--server", no_server()]
    argv += ["--architecture", "continuous", "--data-dir", str(tmp_path)]
    assert main(argv) == 0
    assert len(started) == 1
    assert (tmp_path / "notes.fr.txt").read_text() == TEXT
    assert "starting the engine here" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("name", "data", "flags", "says"),
    [
        ("report.pdf", b"%PDF", [], "not a supported file type"),
        ("notes.txt", b"", [], "is empty"),
        ("notes.txt", b"Hi.", ["--to", "xx"], "unknown language code 'xx'"),
        ("notes.txt", b"Hi.", ["--architecture", "echo"], "--architecture echo"),
    ],
)
def test_wrong_input_exits_2_before_an_engine_starts(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    name: str,
    data: bytes,
    flags: list[str],
    says: str,
) -> None:
    def no_engine(*_: object, **__: object) -> object:
        raise AssertionError("the engine was started")

    import dragoman.api.serve as serve
    import dragoman.models.prepare as prepare

    monkeypatch.setattr(serve, "open_translator", no_engine)
    monkeypatch.setattr(prepare, "prepare", no_engine)
    source = tmp_path / name
    source.write_bytes(data)
    argv = ["translate", str(source), "--to", "de", "--server", no_server(), *flags]
    assert main(argv) == 2
    assert says in capsys.readouterr().err
    assert not list(tmp_path.glob("*.de.*"))


def test_output_is_for_a_file_only(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["translate", "Hello there", "--to", "de", "-o", "x.txt"]) == 2
    assert "is no file" in capsys.readouterr().err
