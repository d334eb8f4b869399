"""The Serve config and RayService manifest `dragoman deploy ray` writes, from the same
settings file as `dragoman serve` (no cluster)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

pytest.importorskip("ray.serve")

from ray.serve.schema import ServeDeploySchema

from dragoman.cli import main
from dragoman.deploy.ray import haproxy
from dragoman.deploy.ray.app import build
from dragoman.deploy.ray.settings import RaySettings

SERVER_TOML = """
architecture = "echo"
max_num_seqs = 8
drain_seconds = 12

[[models]]
name = "qwen"
model = "qwen2.5-coder-0.5b-instruct"
languages = ["en", "de", "zh"]

[[models]]
name = "gemma"
model = "gemma-3-270m"
pairs = ["en-fr"]
"""


@pytest.fixture
def server_toml(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "server.toml"
    path.write_text(SERVER_TOML)
    # `--config` sets DRAGOMAN_CONFIG for the process (cli.py); set here, it is undone after.
    monkeypatch.setenv("DRAGOMAN_CONFIG", str(path))
    # The file's settings, not the integration tier's pin of the engine (environment beats file).
    monkeypatch.delenv("DRAGOMAN_ARCHITECTURE", raising=False)
    return path


def test_config_out_writes_a_serve_config_from_the_serve_settings_file(
    server_toml: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "serve.yaml"
    monkeypatch.setenv("DRAGOMAN_MAX_REPLICAS", "3")  # a flag's environment twin
    args = ["deploy", "ray", "--config", str(server_toml), "--config-out", str(out)]
    args += ["--min-replicas", "1", "--port", "8123"]
    assert main(args) == 0
    config = yaml.safe_load(out.read_text())
    ServeDeploySchema.model_validate(config)
    assert config["http_options"] == {"host": "127.0.0.1", "port": 8123}
    (app,) = config["applications"]
    assert app["import_path"] == "dragoman.deploy.ray.app:build"
    deployments = {d["name"]: d for d in app["deployments"]}
    assert set(deployments) == {"ingress", "model-qwen", "model-gemma"}
    qwen = deployments["model-qwen"]
    assert qwen["max_ongoing_requests"] == 8  # max_num_seqs
    assert qwen["autoscaling_config"]["target_ongoing_requests"] == 6.0  # 0.75 of it
    assert qwen["autoscaling_config"]["max_replicas"] == 3
    assert qwen["graceful_shutdown_timeout_s"] >= 12  # at least the drain
    assert qwen["ray_actor_options"]["num_cpus"] == 0.5  # echo: no engine
    # The args rebuild the same app where it is deployed: models and pairs travel with them.
    assert [m["name"] for m in app["args"]["models"]] == ["qwen", "gemma"]
    assert build(app["args"]) is not None


def test_secrets_never_go_into_the_files(
    server_toml: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DRAGOMAN_API_KEYS", "secret-key-1")
    monkeypatch.setenv("DRAGOMAN_METRICS_KEY", "secret-metrics")
    out, rs = tmp_path / "serve.yaml", tmp_path / "rayservice.yaml"
    args = ["deploy", "ray", "--config", str(server_toml)]
    assert main([*args, "--config-out", str(out), "--rayservice-out", str(rs)]) == 0
    for path in (out, rs):
        assert "secret-key-1" not in path.read_text()
        assert "secret-metrics" not in path.read_text()


def test_a_store_url_with_a_password_never_goes_into_the_files(
    server_toml: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Nor into the runtime_env (its env_vars are written too): `build` reads it from the
    environment of the cluster's processes, as it does the keys; the RayService's pods take it
    from the keys Secret. A URL without a password stays in the args."""
    cache = "redis://:cache-PASSWORD@valkey:6379/0"
    glossary = "redis://dragoman:gl@ss-PASSWORD@valkey:6379/1"  # an '@' in the password
    monkeypatch.setenv("DRAGOMAN_CACHE_URL", cache)
    monkeypatch.setenv("DRAGOMAN_GLOSSARY_URL", glossary)
    monkeypatch.setenv("DRAGOMAN_API_KEYS", "key-PASSWORD")
    out, rs = tmp_path / "serve.yaml", tmp_path / "rayservice.yaml"
    args = ["deploy", "ray", "--config", str(server_toml)]
    assert main([*args, "--config-out", str(out), "--rayservice-out", str(rs)]) == 0
    for path in (out, rs):
        assert "PASSWORD" not in path.read_text() and "valkey" not in path.read_text()
    note = capsys.readouterr().err
    assert "DRAGOMAN_CACHE_URL" in note and "DRAGOMAN_GLOSSARY_URL" in note
    assert "PASSWORD" not in note
    # The app is built where the variables are: it gets both URLs back.
    (app,) = yaml.safe_load(out.read_text())["applications"]
    assert "cache_url" not in app["args"] and "glossary_url" not in app["args"]
    settings = RaySettings(**app["args"])
    assert (settings.cache_url, settings.glossary_url) == (cache, glossary)
    # Every pod may build the app: each reads them from the Secret.
    cluster = yaml.safe_load(rs.read_text())["spec"]["rayClusterConfig"]
    for spec in (cluster["headGroupSpec"], *cluster["workerGroupSpecs"]):
        (container,) = spec["template"]["spec"]["containers"]
        refs = {e["name"]: e["valueFrom"]["secretKeyRef"] for e in container["env"]}
        assert refs == {
            "DRAGOMAN_API_KEYS": {"name": "dragoman-keys", "key": "api-keys"},
            "DRAGOMAN_CACHE_URL": {"name": "dragoman-keys", "key": "cache-url"},
            "DRAGOMAN_GLOSSARY_URL": {"name": "dragoman-keys", "key": "glossary-url"},
        }

    monkeypatch.setenv("DRAGOMAN_CACHE_URL", "redis://valkey:6379/0")  # nothing to hide
    monkeypatch.delenv("DRAGOMAN_GLOSSARY_URL")
    assert main([*args, "--config-out", str(out)]) == 0
    (app,) = yaml.safe_load(out.read_text())["applications"]
    assert app["args"]["cache_url"] == "redis://valkey:6379/0"


def test_rayservice_embeds_a_valid_serve_config(server_toml: Path, tmp_path: Path) -> None:
    rs = tmp_path / "rayservice.yaml"
    args = ["deploy", "ray", "--config", str(server_toml), "--rayservice-out", str(rs)]
    assert main([*args, "--max-replicas", "2", "--image", "registry.local/dragoman:1"]) == 0
    doc = yaml.safe_load(rs.read_text())
    assert (doc["apiVersion"], doc["kind"]) == ("ray.io/v1", "RayService")
    serve_config = yaml.safe_load(doc["spec"]["serveConfigV2"])
    ServeDeploySchema.model_validate(serve_config)
    assert serve_config["http_options"] == {"host": "0.0.0.0", "port": 8000}
    cluster = doc["spec"]["rayClusterConfig"]
    assert cluster["rayVersion"] == "2.60.0"
    assert cluster["enableInTreeAutoscaling"] is True
    (workers,) = cluster["workerGroupSpecs"]
    assert (workers["minReplicas"], workers["maxReplicas"]) == (2, 4)  # 2 models x 1..2
    for spec in (cluster["headGroupSpec"], workers):
        (container,) = spec["template"]["spec"]["containers"]
        assert container["image"] == "registry.local/dragoman:1"


def test_bad_replica_bounds_fail_loudly(server_toml: Path, tmp_path: Path) -> None:
    args = ["deploy", "ray", "--config", str(server_toml), "--config-out", str(tmp_path / "x")]
    assert main([*args, "--min-replicas", "3", "--max-replicas", "2"]) == 2


def test_the_whole_layout_is_one_deployment_of_whole_servers(
    server_toml: Path, tmp_path: Path
) -> None:
    out = tmp_path / "serve.yaml"
    args = ["deploy", "ray", "--config", str(server_toml), "--config-out", str(out)]
    assert main([*args, "--ray-layout", "whole", "--max-replicas", "3"]) == 0
    config = yaml.safe_load(out.read_text())
    ServeDeploySchema.model_validate(config)
    (app,) = config["applications"]
    (server,) = app["deployments"]
    assert server["name"] == "server"
    # HTTP requests as an ingress takes them; scaled on the engines' load as a model replica.
    assert server["max_ongoing_requests"] == 1000
    assert server["autoscaling_config"]["target_ongoing_requests"] == 6.0
    assert server["graceful_shutdown_timeout_s"] >= 12
    assert app["args"]["ray_layout"] == "whole"
    assert build(app["args"]) is not None


def test_the_auto_layout_is_whole_for_one_model_group_behind_haproxy_and_split_otherwise(
    server_toml: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def deployments(*flags: str) -> set[str]:
        out = tmp_path / "serve.yaml"
        assert main(["deploy", "ray", *flags, "--config-out", str(out)]) == 0
        (app,) = yaml.safe_load(out.read_text())["applications"]
        return {d["name"] for d in app["deployments"]}

    # Behind Serve's HAProxy ingress (the environment its processes get from cluster_env()).
    monkeypatch.setenv(haproxy.ENABLE, "1")
    # The settings file's two model groups: one deployment each behind the ingress.
    several = ("--config", str(server_toml), "--ray-layout", "auto")
    assert deployments(*several) == {"ingress", "model-qwen", "model-gemma"}
    monkeypatch.delenv("DRAGOMAN_CONFIG")
    one = ["--architecture", "echo", "--languages", "en,fr"]
    assert deployments(*one, "--ray-layout", "auto") == {"server"}
    assert deployments(*one) == {"server"}  # auto is the default
    # Behind Serve's Python proxy, which does not retry a request whose replica died: split,
    # whose ingress does.
    monkeypatch.delenv(haproxy.ENABLE)
    assert deployments(*one) == {"ingress", "model-echo-qwen2.5-coder-0.5b-instruct"}
