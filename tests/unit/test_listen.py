"""A server's address is checked before it starts work: a port in use is a one-line error and
exit 2, not uvicorn's exit 3 after the app (on a real engine, the model load) has started."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest

from dragoman.cli import main
from dragoman.errors import ConfigError
from dragoman.listen import check_listen


@pytest.fixture
def taken_port() -> Iterator[int]:
    with socket.create_server(("127.0.0.1", 0)) as listener:
        yield int(listener.getsockname()[1])


def test_a_free_port_passes_and_is_left_free() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    check_listen("127.0.0.1", port)
    check_listen("127.0.0.1", port)  # nothing kept bound by the first check
    check_listen("127.0.0.1", 0)


def test_a_port_in_use_is_refused(taken_port: int) -> None:
    with pytest.raises(ConfigError, match=f"--port {taken_port}: cannot listen there"):
        check_listen("127.0.0.1", taken_port)


@pytest.mark.parametrize(
    "argv",
    [
        ["serve", "--architecture", "echo"],
        ["route", "--backend-urls", "http://127.0.0.1:9"],
    ],
)
def test_serve_and_route_on_a_port_in_use_exit_2_with_one_line(
    argv: list[str], taken_port: int, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([*argv, "--host", "127.0.0.1", "--port", str(taken_port)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        f"dragoman: error: --host 127.0.0.1 --port {taken_port}: cannot listen there "
        "(Address already in use)"
    ]
