from __future__ import annotations

import subprocess
import sys

import pytest

from dragoman.bench.servers import Launched, free_port
from tests.integration.conftest import quickest_engine

pytestmark = pytest.mark.integration


def test_translate_command_asks_the_running_server(live_server: Launched) -> None:
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "dragoman",
            "translate",
            "Thank you very much for your help.",
            "--to",
            "fr",
            "--server",
            live_server.url,
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert "Merci" in out.stdout


def test_translate_command_bad_language_is_a_one_line_error(live_server: Launched) -> None:
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "dragoman",
            "translate",
            "Hello",
            "--to",
            "xx",
            "--server",
            live_server.url,
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 2  # the input is wrong, as a bad flag
    assert out.stderr.strip() == (
        "dragoman: error: target_lang: unknown language code 'xx' (ISO 639-1)"
    )


def test_translate_command_without_a_server_starts_the_engine_here_and_detects() -> None:
    # No server at --server: the engine `serve` would pick starts in the command (here the
    # quickest one), and `--source auto` is detected as the server would.
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "dragoman",
            "translate",
            "Merci beaucoup pour votre aide.",
            "--source",
            "auto",
            "--to",
            "en",
            "--server",
            f"http://127.0.0.1:{free_port()}",
            *quickest_engine(),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    assert "thank" in out.stdout.lower()
    assert len(out.stdout.splitlines()) == 1, out.stdout[:3000]  # no engine log line there
    assert "starting the engine here" in out.stderr
