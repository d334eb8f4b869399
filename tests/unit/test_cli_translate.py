"""`dragoman translate` against a running server with keys on: a real echo server on
127.0.0.1 (it answers with the text itself)."""

from __future__ import annotations

import io
import json
import logging
import os
import socket
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from dragoman import logs
from dragoman.bench.servers import launch_echo
from dragoman.cli import main


def no_server() -> str:
    """The URL of a port nothing listens on: the command starts its engine here."""
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{free.getsockname()[1]}"


def local_echo(monkeypatch: pytest.MonkeyPatch, on_open: Callable[[Any], None]) -> None:
    """The engine `translate` starts here is the echo engine (`on_open` sees its settings);
    nothing is prepared."""
    import dragoman.api.serve as serve
    import dragoman.models.prepare as prepare
    from dragoman.engine.echo import open_echo

    def fake_open(settings: Any, langs: tuple[str, ...]) -> object:
        on_open(settings)
        return open_echo("echo", langs, 0.0)

    monkeypatch.setattr(serve, "open_translator", fake_open)
    monkeypatch.setattr(prepare, "prepare", lambda *args, **kwargs: None)


def test_translate_sends_its_key_to_a_server_with_keys_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("DRAGOMAN_API_KEYS", "the-key")
    server = launch_echo(tmp_path, "en,fr")
    monkeypatch.delenv("DRAGOMAN_API_KEYS")
    try:
        argv = ["translate", "Hello there", "--to", "fr", "--server", server.url]
        assert main(argv) == 1  # no key: the server's refusal, one line
        assert "API key is required" in capsys.readouterr().err
        assert main([*argv, "--api-key", "the-key"]) == 0
        assert capsys.readouterr().out == "Hello there\n"
        monkeypatch.setenv("DRAGOMAN_API_KEY", "the-key")
        assert main(argv) == 0
    finally:
        server.stop()


def test_translate_with_a_language_the_server_refuses_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--to xx` is wrong input, as a bad flag is (exit 2); the server's message is the line."""
    server = launch_echo(tmp_path, "en,fr")
    try:
        assert main(["translate", "Hello", "--to", "xx", "--server", server.url]) == 2
        assert capsys.readouterr().err == (
            "dragoman: error: target_lang: unknown language code 'xx' (ISO 639-1)\n"
        )
    finally:
        server.stop()


def test_translate_with_an_unknown_language_and_no_server_exits_2_before_any_engine(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ["translate", "Hello", "--to", "xx", "--server", no_server()]
    assert main(argv) == 2
    assert capsys.readouterr().err == (
        "dragoman: error: target_lang: unknown language code 'xx' (ISO 639-1)\n"
    )


def test_translate_without_a_server_ignores_serves_models(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A config file's `[[models]]` are serve's: the local engine is `--model`'s alone."""
    from dragoman.service.settings import ServeSettings

    config = tmp_path / "dragoman.toml"
    config.write_text(
        '[[models]]\nname = "big"\nmodel = "qwen2.5-coder-1.5b-instruct"\n'
        'languages = ["en", "fr"]\n'
    )
    monkeypatch.setenv("DRAGOMAN_CONFIG", str(config))
    started: list[ServeSettings] = []
    local_echo(monkeypatch, started.append)
    url = no_server()
    argv = ["translate", "Hello", "--to", "fr", "--server", url, "--architecture", "continuous"]
    assert main([*argv, "--data-dir", str(tmp_path)]) == 0
    assert capsys.readouterr().out == "Hello\n"
    assert [s.models for s in started] == [[]]


def test_serves_architecture_in_the_environment_does_not_fail_a_translation(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """DRAGOMAN_ARCHITECTURE (or a config file) shared with `serve --architecture echo` is
    taken; only an engine started here needs one translate can start."""
    server = launch_echo(tmp_path, "en,fr")
    monkeypatch.setenv("DRAGOMAN_ARCHITECTURE", "echo")
    try:
        assert main(["translate", "Hello", "--to", "fr", "--server", server.url]) == 0
        assert capsys.readouterr().out == "Hello\n"
    finally:
        server.stop()
    assert main(["translate", "Hello", "--to", "fr", "--server", server.url]) == 2
    assert capsys.readouterr().err.endswith(
        "--architecture echo: translate starts host, continuous or llama-cpp\n"
    )


@pytest.mark.parametrize(
    ("text", "status", "out"),
    [
        ("12345", 0, "12345\n"),  # no letters: as it is
        ("Bonjour tout le monde, comment allez-vous aujourd'hui ?", 0, None),  # already French
        ("Καλημέρα κόσμε, τι κάνεις σήμερα;", 2, ""),  # in no served language
    ],
)
def test_translate_auto_without_a_server_answers_as_a_server_does(
    text: str, status: int, out: str | None, capsys: pytest.CaptureFixture[str]
) -> None:
    """Decided before any engine starts: the server's 200 unchanged, or its 400 (exit 2)."""
    url = no_server()
    argv = ["translate", text, "--source", "auto", "--to", "fr", "--server", url]
    assert main(argv) == status
    got = capsys.readouterr()
    assert got.out == (f"{text}\n" if out is None else out)
    if status == 2:
        assert "dragoman: error: the text's language is none " in got.err


@pytest.mark.parametrize("text", ["", "  \n\t "])
@pytest.mark.parametrize("source", ["auto", "fr"])
def test_translate_of_empty_input_exits_2_as_a_server_answers_it(
    text: str, source: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Empty or blank stdin: a server refuses it (422, exit 2); without one, `--source auto`
    printed it back (exit 0), and a given source went on to start the engine."""
    import io

    import dragoman.api.serve as serve
    import dragoman.models.prepare as prepare

    def no_engine(*_: object, **__: object) -> object:
        raise AssertionError("the engine was started")

    monkeypatch.setattr(serve, "open_translator", no_engine)
    monkeypatch.setattr(prepare, "prepare", no_engine)
    monkeypatch.setattr("sys.stdin", io.StringIO(text))
    url = no_server()
    argv = ["translate", "-", "--source", source, "--to", "en", "--server", url]
    assert main(argv) == 2
    got = capsys.readouterr()
    assert (got.out, got.err) == ("", "dragoman: error: text: text must not be empty\n")


@pytest.fixture
def root_stream() -> Iterator[io.StringIO]:
    """The root logger's one handler (as the CLI's basicConfig makes it) writes here."""
    root = logging.getLogger()
    saved = root.handlers[:]
    stream = io.StringIO()
    root.handlers[:] = [logging.StreamHandler(stream)]
    yield stream
    root.handlers[:] = saved
    logging.captureWarnings(False)  # json's setup routes warnings to logging: not for the suite


@pytest.mark.parametrize("how", ["flag", "environment"])
def test_translate_with_a_local_engine_writes_json_log_lines(
    how: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    root_stream: io.StringIO,
) -> None:
    """`--log-format json` (DRAGOMAN_LOG_FORMAT) as on `serve`: the engine's records and the
    notice that it starts here are JSON lines; the translation is stdout's alone."""
    # Set, then removed: undone after the test, so the path json's setup sets goes too.
    monkeypatch.setenv("VLLM_LOGGING_CONFIG_PATH", "")
    monkeypatch.delenv("VLLM_LOGGING_CONFIG_PATH")

    local_echo(monkeypatch, lambda _: logging.getLogger("vllm.engine").warning("engine up: 東京"))
    url = no_server()
    argv = ["translate", "Hello", "--to", "fr", "--server", url, "--architecture", "continuous"]
    argv += ["--data-dir", str(tmp_path)]
    if how == "flag":
        argv += ["--log-format", "json"]
    else:
        monkeypatch.setenv("DRAGOMAN_LOG_FORMAT", "json")
    assert main(argv) == 0
    got = capsys.readouterr()
    assert (got.out, got.err) == ("Hello\n", "")
    lines = [json.loads(line) for line in root_stream.getvalue().splitlines()]
    assert [(line["logger"], line["level"]) for line in lines] == [
        ("dragoman.cli_translate", "WARNING"),
        ("vllm.engine", "WARNING"),
    ]
    assert lines[0]["message"].startswith(f"no server at {url}; starting the engine here")
    assert lines[1]["message"] == "engine up: 東京"
    assert os.environ["VLLM_LOGGING_CONFIG_PATH"] == str(logs.VLLM_CONFIG)  # for its processes
