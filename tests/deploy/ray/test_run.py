"""`dragoman deploy ray`'s local cluster size and log lines (no cluster started)."""

from __future__ import annotations

import io
import json
import logging
import os
from collections.abc import Iterator

import pytest

from dragoman import logs
from dragoman.cli import main
from dragoman.deploy.ray import run
from dragoman.deploy.ray.app import deployment_options
from dragoman.deploy.ray.settings import RaySettings


def test_a_local_cluster_fits_the_ingress_and_every_min_replica(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(run.os, "cpu_count", lambda: 2)
    # One real replica asks for 2 CPUs, the ingress for 1: a 2-CPU cluster would never place it.
    real = RaySettings(languages=["en", "fr"], replica_cpus=2, ray_layout="split")
    assert run.local_cpus(real) == 3
    assert run.local_cpus(real.model_copy(update={"min_replicas": 3, "max_replicas": 3})) == 7
    echo = RaySettings(architecture="echo", languages=["en", "fr"], ray_layout="split")
    assert run.local_cpus(echo) == 2  # 1.5 needed: the machine's count
    assert run.local_cpus(echo.model_copy(update={"ray_num_cpus": 16})) == 16


def test_a_whole_layout_cluster_fits_its_min_replicas(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(run.os, "cpu_count", lambda: 2)
    whole = RaySettings(languages=["en", "fr"], replica_cpus=2, ray_layout="whole")
    assert run.local_cpus(whole) == 2  # no ingress of its own
    assert run.local_cpus(whole.model_copy(update={"min_replicas": 3, "max_replicas": 3})) == 6


@pytest.fixture
def root_stream(monkeypatch: pytest.MonkeyPatch) -> Iterator[io.StringIO]:
    """The root logger's one handler (as the CLI's basicConfig makes it) writes here; Ray's
    and Serve's loggers are put back as their imports left them."""
    # Set, then removed: undone after the test, so the path json's setup sets goes too.
    monkeypatch.setenv("VLLM_LOGGING_CONFIG_PATH", "")
    monkeypatch.delenv("VLLM_LOGGING_CONFIG_PATH")
    names = ("", "ray", "ray.serve")
    saved = {n: (logging.getLogger(n).handlers[:], logging.getLogger(n).propagate) for n in names}
    stream = io.StringIO()
    logging.getLogger().handlers[:] = [logging.StreamHandler(stream)]
    yield stream
    for name, (handlers, propagate) in saved.items():
        logging.getLogger(name).handlers[:] = handlers
        logging.getLogger(name).propagate = propagate
    logging.captureWarnings(False)  # json's setup routes warnings to logging: not for the suite


@pytest.mark.parametrize("how", ["flag", "environment"])
def test_deploy_ray_writes_json_log_lines_as_serve_does(
    how: str, monkeypatch: pytest.MonkeyPatch, root_stream: io.StringIO
) -> None:
    """`--log-format json` (DRAGOMAN_LOG_FORMAT) was taken and not applied: the driver's
    lines, dragoman's, Ray's and Serve's, are JSON, set before the cluster starts (no cluster
    here: `run` stands in)."""
    pytest.importorskip("ray.serve")
    # Their imports give their loggers handlers of their own.
    import ray.serve  # noqa: F401

    def fake_run(settings: RaySettings) -> None:
        assert os.environ["VLLM_LOGGING_CONFIG_PATH"] == str(logs.VLLM_CONFIG)  # the cluster's
        for name in ("dragoman.deploy.ray.run", "ray", "ray.serve"):
            logging.getLogger(name).warning("from %s", name)

    monkeypatch.setattr(run, "run", fake_run)
    argv = ["deploy", "ray", "--architecture", "echo", "--languages", "en,fr"]
    if how == "flag":
        argv += ["--log-format", "json"]
    else:
        monkeypatch.setenv("DRAGOMAN_LOG_FORMAT", "json")
    assert main(argv) == 0
    lines = [json.loads(line) for line in root_stream.getvalue().splitlines()]
    assert [line["message"] for line in lines] == [
        "from dragoman.deploy.ray.run",
        "from ray",
        "from ray.serve",
    ]


def test_every_deployment_logs_in_the_format_asked_for() -> None:
    """The replicas' lines are Serve's: each deployment's logging_config carries the format
    (and the Serve config `--config-out` writes, the same options)."""
    pytest.importorskip("ray.serve")
    from ray.serve.schema import LoggingConfig

    for layout in ("split", "whole"):
        s = RaySettings(architecture="echo", languages=["en", "fr"], ray_layout=layout)
        for fmt, level in (("json", "warning"), ("text", "info")):
            given = s.model_copy(update={"log_format": fmt, "log_level": level})
            for options in deployment_options(given).values():
                config = LoggingConfig(**options["logging_config"])
                assert (config.encoding, config.log_level) == (fmt.upper(), level.upper())
