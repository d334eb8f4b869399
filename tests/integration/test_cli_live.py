from __future__ import annotations

import subprocess
import sys

import pytest

from dragoman.bench.servers import Launched

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
    assert out.returncode == 1
    assert out.stderr.strip() == (
        "dragoman: error: target_lang: unknown language code 'xx' (ISO 639-1)"
    )
