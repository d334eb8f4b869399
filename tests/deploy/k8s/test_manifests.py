"""The manifests validate offline (kubernetes-validate --strict for built-in kinds, a JSON
schema for KEDA's envelope), and what they say matches the settings they came from: pods'
variables parse back into the group's serve settings, the route's into its backends, probes
point at the server's real endpoints, sizes at the measured figures."""

from __future__ import annotations

import copy
import json
import math
from pathlib import Path
from typing import Any

import jsonschema
import kubernetes_validate
import pytest
import yaml

from dragoman.api.system import router as system_router
from dragoman.cli import main
from dragoman.deploy.k8s.groups import model_groups
from dragoman.deploy.k8s.manifests import SCALE_METRIC, all_objects, group_name
from dragoman.deploy.k8s.settings import K8sSettings
from dragoman.deploy.k8s.sizing import PodSize
from dragoman.router.settings import RouteSettings
from dragoman.service.settings import ModelSpec, ServeSettings

K8S = "1.37.0"
SCHEMA = json.loads((Path(__file__).parent / "keda-scaledobject.schema.json").read_text())
SIZE = PodSize(cpu=2.0, memory_mib=4096, start_seconds=32.0, source="test")
MODELS = [
    ModelSpec(name="qwen", model="qwen2.5-coder-0.5b-instruct", languages=["en", "de", "zh"]),
    ModelSpec(name="gemma", model="gemma-3-270m", pairs=["en-fr", "fr-en"]),
]


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    for var in list(os.environ):
        if var.startswith("DRAGOMAN_"):
            monkeypatch.delenv(var)


def settings(**kw: Any) -> K8sSettings:
    base: dict[str, Any] = {"models": MODELS, "max_num_seqs": 8, "drain_seconds": 45.0}
    return K8sSettings(**{**base, **kw})


def objects(s: K8sSettings) -> list[dict[str, Any]]:
    return [o for objs in all_objects(s, model_groups(s), SIZE).values() for o in objs]


def by_kind(objs: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [o for o in objs if o["kind"] == kind]


def container(deployment: dict[str, Any]) -> dict[str, Any]:
    c: dict[str, Any] = deployment["spec"]["template"]["spec"]["containers"][0]
    return c


def env_of(c: dict[str, Any]) -> dict[str, str]:
    return {e["name"]: e["value"] for e in c["env"] if "value" in e}


@pytest.mark.parametrize("autoscaler", ["hpa", "keda", "none"])
def test_builtin_kinds_validate_strict(autoscaler: str) -> None:
    objs = objects(settings(autoscaler=autoscaler, namespace="mt"))
    builtin = [o for o in objs if o["apiVersion"] != "keda.sh/v1alpha1"]
    kinds = {o["kind"] for o in builtin}
    assert {"Deployment", "Service", "PodDisruptionBudget"} <= kinds
    assert ("HorizontalPodAutoscaler" in kinds) == (autoscaler == "hpa")
    for obj in builtin:
        kubernetes_validate.validate(obj, K8S, strict=True)


def test_strict_validation_rejects_an_unknown_field() -> None:
    deployment = copy.deepcopy(by_kind(objects(settings()), "Deployment")[0])
    container(deployment)["startupProbes"] = container(deployment)["startupProbe"]
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(deployment, K8S, strict=True)


def test_keda_scaled_objects_match_the_envelope_schema() -> None:
    scaled = by_kind(objects(settings(autoscaler="keda", namespace="mt")), "ScaledObject")
    assert len(scaled) == len(MODELS)
    for obj in scaled:
        jsonschema.validate(obj, SCHEMA)
        query = obj["spec"]["triggers"][0]["metadata"]["query"]
        assert SCALE_METRIC in query and 'namespace="mt"' in query
        assert obj["spec"]["triggers"][0]["metadata"]["threshold"] == "8"  # max_num_seqs
    broken = copy.deepcopy(scaled[0])
    del broken["spec"]["triggers"][0]["metadata"]["query"]
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(broken, SCHEMA)


def test_one_deployment_service_pdb_and_hpa_per_model_group() -> None:
    objs = objects(settings())
    names = {o["kind"]: set() for o in objs}
    for o in objs:
        names[o["kind"]].add(o["metadata"]["name"])
    groups = {"dragoman-qwen", "dragoman-gemma"}
    assert names["Deployment"] == groups | {"dragoman-route"}
    assert names["Service"] == groups | {"dragoman-route"}
    assert names["PodDisruptionBudget"] == groups | {"dragoman-route"}
    assert names["HorizontalPodAutoscaler"] == groups
    for hpa in by_kind(objs, "HorizontalPodAutoscaler"):
        metric = hpa["spec"]["metrics"][0]["pods"]
        assert metric["metric"]["name"] == SCALE_METRIC
        assert metric["target"]["averageValue"] == "8"


def test_the_scale_metric_is_one_the_server_exports() -> None:
    from dragoman.metrics import Metrics

    assert f"# TYPE {SCALE_METRIC} gauge" in Metrics().exposition().decode()


def test_probes_hit_the_servers_health_and_ready_endpoints() -> None:
    paths = {route.path for route in system_router.routes}  # type: ignore[attr-defined]
    for dep in by_kind(objects(settings(port=8123)), "Deployment"):
        c = container(dep)
        port_name = c["ports"][0]["name"]
        if dep["metadata"]["name"] == "dragoman-route":
            assert c["ports"][0]["containerPort"] == 8080
            continue
        assert c["ports"][0]["containerPort"] == 8123
        assert c["startupProbe"]["httpGet"] == {"path": "/health", "port": port_name}
        assert c["livenessProbe"]["httpGet"] == {"path": "/health", "port": port_name}
        assert c["readinessProbe"]["httpGet"] == {"path": "/ready", "port": port_name}
        assert {"/health", "/ready"} <= paths


def test_startup_window_and_grace_come_from_load_time_and_drain() -> None:
    s = settings(prestop_seconds=7)
    for dep in by_kind(objects(s), "Deployment"):
        pod = dep["spec"]["template"]["spec"]
        c = pod["containers"][0]
        assert c["lifecycle"]["preStop"] == {"sleep": {"seconds": 7}}
        assert pod["terminationGracePeriodSeconds"] >= 7 + 45
        if dep["metadata"]["name"] != "dragoman-route":
            probe = c["startupProbe"]
            window = probe["periodSeconds"] * probe["failureThreshold"]
            assert window >= 2 * SIZE.start_seconds


def test_rollout_surges_a_full_set_and_never_goes_under() -> None:
    for dep in by_kind(objects(settings()), "Deployment"):
        assert dep["spec"]["strategy"]["rollingUpdate"] == {"maxSurge": "100%", "maxUnavailable": 0}


def test_model_pods_are_sized_guaranteed_from_the_figures() -> None:
    for dep in by_kind(objects(settings()), "Deployment"):
        if dep["metadata"]["name"] == "dragoman-route":
            continue
        res = container(dep)["resources"]
        assert res["requests"] == res["limits"] == {"cpu": "2000m", "memory": "4096Mi"}


def test_pod_variables_parse_back_into_each_groups_serve_settings(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    s = settings(max_output_tokens=256, cache_mib=0)
    for dep in by_kind(objects(s), "Deployment"):
        if dep["metadata"]["name"] == "dragoman-route":
            continue
        with monkeypatch.context() as m:
            for name, value in env_of(container(dep)).items():
                m.setenv(name, value)
            parsed = ServeSettings()
        (spec,) = [x for x in MODELS if dep["metadata"]["name"] == f"dragoman-{x.name}"]
        assert parsed.models == [spec]
        assert (parsed.max_num_seqs, parsed.drain_seconds) == (8, 45.0)
        assert (parsed.max_output_tokens, parsed.cache_mib) == (256, 0)
        assert (parsed.host, parsed.port) == ("0.0.0.0", s.port)


def test_route_backends_are_the_groups_services_with_their_pairs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    s = settings()
    (route,) = [
        d for d in by_kind(objects(s), "Deployment") if d["metadata"]["name"].endswith("-route")
    ]
    for name, value in env_of(container(route)).items():
        monkeypatch.setenv(name, value)
    parsed = RouteSettings()
    served = {b.name: (b.url, set(b.pairs)) for b in parsed.backends}
    routes = s.model_routes()
    for g in model_groups(s):
        url, pairs = served[g.slug]
        assert url == f"http://{group_name(s, g)}:{s.port}"
        assert pairs == {f"{a}-{b}" for (a, b), model in routes.items() if model == g.key}
    # Each backend is a whole group: the route lets it hold every pod's admitted texts.
    assert parsed.max_in_flight == s.admission_limit() * s.max_replicas
    services = {o["metadata"]["name"] for o in by_kind(objects(s), "Service")}
    assert {url.split("//")[1].split(":")[0] for url, _ in served.values()} <= services


def test_single_model_group_takes_the_model_and_languages(monkeypatch: pytest.MonkeyPatch) -> None:
    s = K8sSettings(languages=["en", "fr", "es"])
    (g,) = model_groups(s)
    assert len(g.pairs) == 6 and "en-fr" in g.pairs
    for name, value in g.env.items():
        monkeypatch.setenv(name, value)
    assert ServeSettings().languages == ["en", "fr", "es"]


def test_deploy_k8s_reads_the_serve_config_file_and_writes_valid_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "server.toml"
    config.write_text(
        "max_num_seqs = 8\ndrain_seconds = 20\n"
        '[[models]]\nname = "qwen"\nmodel = "qwen2.5-coder-0.5b-instruct"\n'
        'languages = ["en", "de"]\n'
        '[[models]]\nname = "gemma"\nmodel = "gemma-3-270m"\npairs = ["en-fr"]\n'
    )
    out = tmp_path / "k8s"
    monkeypatch.setenv("DRAGOMAN_CONFIG", "")  # restored after main() sets it from --config
    args = ["--out", str(out), "--cpu", "2", "--memory-mib", "3072", "--start-seconds", "40"]
    assert main(["deploy", "k8s", "--config", str(config), *args]) == 0
    files = sorted(p.name for p in out.iterdir())
    assert files == [
        "model-gemma.yaml",
        "model-qwen.yaml",
        "prometheus-adapter-values.yaml",
        "route.yaml",
    ]
    docs = [
        d
        for p in out.glob("*.yaml")
        if p.name != "prometheus-adapter-values.yaml"
        for d in yaml.safe_load_all(p.read_text())
    ]
    assert len(docs) == 2 * 4 + 3
    for doc in docs:
        kubernetes_validate.validate(doc, K8S, strict=True)
    qwen = next(
        d for d in docs if d["kind"] == "Deployment" and d["metadata"]["name"] == "dragoman-qwen"
    )
    assert env_of(container(qwen))["DRAGOMAN_MAX_NUM_SEQS"] == "8"
    probe = container(qwen)["startupProbe"]
    assert probe["periodSeconds"] * probe["failureThreshold"] == math.ceil(3 * 40 / 5) * 5
    assert container(qwen)["resources"]["limits"]["memory"] == "3072Mi"
    assert qwen["spec"]["template"]["spec"]["terminationGracePeriodSeconds"] >= 20 + 5


def _secret_refs(s: K8sSettings) -> dict[str, dict[str, Any]]:
    (dep, *_) = [
        d for d in by_kind(objects(s), "Deployment") if d["metadata"]["name"] != "dragoman-route"
    ]
    return {
        e["name"]: e["valueFrom"]["secretKeyRef"] for e in container(dep)["env"] if "valueFrom" in e
    }


def test_keys_asked_for_make_the_keys_secret_required(tmp_path: Path) -> None:
    """The Secret was optional whatever the settings: without it the pods served with keys
    off although the operator gave --api-keys-file."""
    assert {r["optional"] for r in _secret_refs(settings()).values()} == {True}
    for asked, required in (
        ({"api_keys_file": tmp_path / "keys"}, "DRAGOMAN_API_KEYS"),
        ({"metrics_key": "m"}, "DRAGOMAN_METRICS_KEY"),
    ):
        refs = _secret_refs(settings(**asked))
        assert {var for var, r in refs.items() if not r["optional"]} == {required}
        assert {r["name"] for r in refs.values()} == {"dragoman-keys"}


def test_the_route_pod_takes_the_metrics_key_and_no_api_keys() -> None:
    """`dragoman route --metrics-key` guards the proxy's /metrics, /v1/stats and /v1/backends:
    the pod gets the servers' key from the same Secret (it checks no API keys: it forwards
    them)."""
    for asked, optional in (({}, True), ({"metrics_key": "m"}, False)):
        (route,) = [
            d
            for d in by_kind(objects(settings(**asked)), "Deployment")
            if d["metadata"]["name"] == "dragoman-route"
        ]
        refs = {
            e["name"]: e["valueFrom"]["secretKeyRef"]
            for e in container(route)["env"]
            if "valueFrom" in e
        }
        assert refs == {
            "DRAGOMAN_METRICS_KEY": {
                "name": "dragoman-keys",
                "key": "metrics-key",
                "optional": optional,
            }
        }


def test_a_path_setting_travels_and_port_0_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    s = settings(llama_server=Path("/opt/llama-server"))
    (dep, *_) = [
        d for d in by_kind(objects(s), "Deployment") if d["metadata"]["name"] != "dragoman-route"
    ]
    assert env_of(container(dep))["DRAGOMAN_LLAMA_SERVER"] == "/opt/llama-server"
    with pytest.raises(ValueError, match="port 0"):
        settings(port=0)


@pytest.mark.parametrize(
    "flags",
    [
        ["--scale-target", "inf"],
        ["--scale-target", "1e-9"],
        ["--cpu", "inf"],
        ["--cpu", "nan"],
        ["--start-seconds", "inf"],
        ["--route-cpu", "1e-9"],
    ],
)
def test_sizes_that_cannot_be_written_are_refused(
    flags: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["deploy", "k8s", "--out", str(tmp_path / "k8s"), *flags]) == 2
    assert capsys.readouterr().err.startswith("dragoman: invalid settings: ")
    assert not (tmp_path / "k8s").exists()


@pytest.mark.parametrize("where", ["file", "file/sub"])
def test_an_out_that_cannot_be_written_is_refused_first(
    where: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "file").write_text("")
    sizes = ["--cpu", "2", "--memory-mib", "3072", "--start-seconds", "40"]
    assert main(["deploy", "k8s", "--out", str(tmp_path / where), *sizes]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"dragoman: error: --out {tmp_path / where}: ") and err.count("\n") == 1


def test_json_logs_reach_the_server_and_route_pods() -> None:
    deployments = by_kind(objects(settings(log_format="json")), "Deployment")
    assert len(deployments) > 1
    for d in deployments:
        assert env_of(container(d))["DRAGOMAN_LOG_FORMAT"] == "json", d["metadata"]["name"]


def test_the_glossary_store_travels_as_the_cache_store_does_a_password_from_the_secret(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """--glossary-url reaches the pods as --cache-url does; a store URL with a password was
    written into the manifests in plain text: it comes from the keys Secret, required."""
    plain = "redis://valkey.mt.svc:6379/0"
    s = settings(cache_url=plain, glossary_url=plain)
    (dep, *_) = [
        d for d in by_kind(objects(s), "Deployment") if d["metadata"]["name"] != "dragoman-route"
    ]
    with monkeypatch.context() as m:
        for name, value in env_of(container(dep)).items():
            m.setenv(name, value)
        parsed = ServeSettings()
    assert (parsed.cache_url, parsed.glossary_url) == (plain, plain)
    assert _secret_refs(s).keys() == {"DRAGOMAN_API_KEYS", "DRAGOMAN_METRICS_KEY"}

    secret = "redis://:hunter2@valkey.mt.svc:6379/0"
    s = settings(cache_url=secret, glossary_url=secret)
    assert "hunter2" not in yaml.safe_dump_all(objects(s))
    refs = _secret_refs(s)
    for var, key in (
        ("DRAGOMAN_CACHE_URL", "cache-url"),
        ("DRAGOMAN_GLOSSARY_URL", "glossary-url"),
    ):
        assert refs[var] == {"name": "dragoman-keys", "key": key, "optional": False}
    for d in by_kind(objects(s), "Deployment"):
        names = [e["name"] for e in container(d)["env"]]
        assert len(names) == len(set(names))  # each variable once


def test_the_glossary_note_says_when_pods_keep_glossaries_apart() -> None:
    from dragoman.deploy.k8s.write import glossary_note

    assert glossary_note(settings(max_replicas=1), 1) is None  # one pod: nothing to share
    note = glossary_note(settings(cache_url="redis://valkey:6379/0"), 2)
    assert note is not None and "--glossary-url" in note and "--cache-url store" in note
    assert glossary_note(settings(glossary_url="redis://valkey:6379/0"), 2) is None


def test_a_store_url_with_its_password_in_the_query_comes_from_the_secret() -> None:
    """The client takes a password from the query too (`?password=`): such a URL was written
    into the manifests in plain text."""
    url = "unix:///run/valkey.sock?db=0&password=hunter2"
    s = settings(cache_url=url, glossary_url=url)
    assert "hunter2" not in yaml.safe_dump_all(objects(s))
    assert {"cache-url", "glossary-url"} <= set(s.required_keys)
    refs = _secret_refs(s)
    assert refs["DRAGOMAN_GLOSSARY_URL"]["key"] == "glossary-url"
    assert refs["DRAGOMAN_CACHE_URL"]["key"] == "cache-url"
