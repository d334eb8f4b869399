"""`dragoman translate` against a running server with keys on: a real echo server on
127.0.0.1 (it answers with the text itself)."""

from __future__ import annotations

from pathlib import Path

import pytest

from dragoman.bench.servers import launch_echo
from dragoman.cli import main


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
