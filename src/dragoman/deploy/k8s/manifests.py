"""The Kubernetes objects, as plain dicts: per model group a Deployment, a Service, a
PodDisruptionBudget and an autoscaler (HPA or KEDA ScaledObject); `dragoman route` in front as
a Deployment, a Service and a PodDisruptionBudget, its backends the groups' Services.

Probes follow src/dragoman/api/system.py: /health answers 200 from the moment the server
listens (also while the model loads and while draining) and 503 `engine_dead` once the engine
died, so it is the startup and liveness probe; /ready answers 200 only when the engine answers
and the server is not draining, so it gates traffic. SIGTERM drains for --drain-seconds.
"""

from __future__ import annotations

import math
from typing import Any

from dragoman.deploy.k8s.groups import DATA_DIR, STORE_URLS, Group
from dragoman.deploy.k8s.settings import K8sSettings
from dragoman.deploy.k8s.sizing import PodSize

Obj = dict[str, Any]
SCALE_METRIC = "dragoman_admitted_in_flight"
STARTUP_PERIOD = 5
STARTUP_MARGIN = 3  # a cold node (image pull done, page cache empty) loads slower than the bench
ENGINE_STOP_SECONDS = 15  # after the drain, the engine's own shutdown (README: Operations)


def _meta(s: K8sSettings, name: str, component: str, group: str | None = None) -> Obj:
    labels = {
        "app.kubernetes.io/name": "dragoman",
        "app.kubernetes.io/instance": s.name,
        "app.kubernetes.io/component": component,
    }
    if group:
        labels["dragoman/group"] = group
    meta: Obj = {"name": name, "labels": labels}
    if s.namespace:
        meta["namespace"] = s.namespace
    return meta


def _selector(s: K8sSettings, component: str, group: str | None) -> dict[str, str]:
    sel = {"app.kubernetes.io/instance": s.name, "app.kubernetes.io/component": component}
    if group:
        sel["dragoman/group"] = group
    return sel


def _env(values: dict[str, str]) -> list[Obj]:
    return [{"name": k, "value": v} for k, v in sorted(values.items())]


def _secret_env(s: K8sSettings) -> list[Obj]:
    """Keys come from a Secret, never from the manifests: each optional unless the settings
    asked for it (then a pod without it does not start, rather than serve with it off). So
    does a store URL with a password, only when the settings hold one (else it is a plain
    variable, or none)."""
    required = s.required_keys
    urls = [(f"DRAGOMAN_{f.upper()}", key) for f, key in STORE_URLS.items() if key in required]
    return [
        {
            "name": var,
            "valueFrom": {
                "secretKeyRef": {
                    "name": keys_secret(s),
                    "key": key,
                    "optional": key not in required,
                }
            },
        }
        for var, key in [
            ("DRAGOMAN_API_KEYS", "api-keys"),
            ("DRAGOMAN_METRICS_KEY", "metrics-key"),
            *urls,
        ]
    ]


def keys_secret(s: K8sSettings) -> str:
    return f"{s.name}-keys"


def _probe(path: str, period: int, failures: int, timeout: int) -> Obj:
    return {
        "httpGet": {"path": path, "port": "http"},
        "periodSeconds": period,
        "failureThreshold": failures,
        "timeoutSeconds": timeout,
    }


def grace_seconds(s: K8sSettings) -> int:
    """preStop sleep + the server's drain + the engine's shutdown."""
    return s.prestop_seconds + math.ceil(s.drain_seconds) + ENGINE_STOP_SECONDS


def startup_failures(size: PodSize) -> int:
    return max(3, math.ceil(STARTUP_MARGIN * size.start_seconds / STARTUP_PERIOD))


def _resources(cpu: float, memory_mib: int) -> Obj:
    amount = {"cpu": f"{round(cpu * 1000)}m", "memory": f"{memory_mib}Mi"}
    # requests = limits: Guaranteed QoS, and with the kubelet's static CPU manager whole
    # cores of the pod's own, which the engine binds its threads to.
    return {"requests": dict(amount), "limits": dict(amount)}


def _deployment(
    s: K8sSettings, name: str, component: str, group: str | None, replicas: int, pod: Obj
) -> Obj:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": _meta(s, name, component, group),
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": _selector(s, component, group)},
            "strategy": {
                "type": "RollingUpdate",
                "rollingUpdate": {"maxSurge": "100%", "maxUnavailable": 0},
            },
            "template": {
                "metadata": {
                    "labels": {**_meta(s, name, component, group)["labels"]},
                    "annotations": pod.pop("annotations", {}),
                },
                "spec": pod,
            },
        },
    }


def group_name(s: K8sSettings, g: Group) -> str:
    return f"{s.name}-{g.slug}"[:63].rstrip("-")


def model_deployment(s: K8sSettings, g: Group, size: PodSize) -> Obj:
    from dragoman.models.catalogue import CATALOGUE

    env = {
        **g.env,
        "DRAGOMAN_HOST": "0.0.0.0",
        "DRAGOMAN_PORT": str(s.port),
        "DRAGOMAN_DATA_DIR": DATA_DIR,
    }
    container: Obj = {
        "name": "dragoman",
        "image": s.image,
        "command": ["dragoman", "serve"],
        "env": [*_env(env), *_secret_env(s)],
        "ports": [{"name": "http", "containerPort": s.port, "protocol": "TCP"}],
        "startupProbe": _probe("/health", STARTUP_PERIOD, startup_failures(size), 2),
        "readinessProbe": _probe("/ready", 5, 2, 2),
        "livenessProbe": _probe("/health", 10, 3, 5),
        "lifecycle": {"preStop": {"sleep": {"seconds": s.prestop_seconds}}},
        "resources": _resources(size.cpu, size.memory_mib),
        "volumeMounts": [{"name": "data", "mountPath": DATA_DIR}],
    }
    pod: Obj = {
        "annotations": {
            "prometheus.io/scrape": "true",
            "prometheus.io/port": str(s.port),
            "prometheus.io/path": "/metrics",
        },
        "terminationGracePeriodSeconds": grace_seconds(s),
        "containers": [container],
        "volumes": [{"name": "data", "emptyDir": {}}],
    }
    if g.model in CATALOGUE:
        # The catalogue's models ship in Python packages inside the image; prepared (about
        # 40 s) into the pod's data folder before the server starts.
        pod["initContainers"] = [
            {
                "name": "prepare-model",
                "image": s.image,
                "command": ["dragoman", "model", "prepare"],
                "env": _env({"DRAGOMAN_MODEL": g.model, "DRAGOMAN_DATA_DIR": DATA_DIR}),
                "resources": _resources(size.cpu, size.memory_mib),
                "volumeMounts": [{"name": "data", "mountPath": DATA_DIR}],
            }
        ]
    return _deployment(s, group_name(s, g), "model", g.slug, s.replicas, pod)


def service(s: K8sSettings, name: str, component: str, group: str | None, port: int) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": _meta(s, name, component, group),
        "spec": {
            "type": "ClusterIP",
            "selector": _selector(s, component, group),
            "ports": [{"name": "http", "port": port, "targetPort": "http", "protocol": "TCP"}],
        },
    }


def pdb(s: K8sSettings, name: str, component: str, group: str | None) -> Obj:
    # maxUnavailable rather than minAvailable: with one replica a node drain can still go on.
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": _meta(s, name, component, group),
        "spec": {"maxUnavailable": 1, "selector": {"matchLabels": _selector(s, component, group)}},
    }


def scale_target(s: K8sSettings) -> float:
    return s.scale_target if s.scale_target is not None else float(s.max_num_seqs)


def _quantity(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else f"{round(x * 1000)}m"


BEHAVIOR: Obj = {
    # Up: at most double a minute (a new pod is ready after about one load time); down:
    # one pod a minute after five calm minutes, so a lull between bursts keeps the pods.
    "scaleUp": {
        "stabilizationWindowSeconds": 0,
        "policies": [{"type": "Percent", "value": 100, "periodSeconds": 60}],
    },
    "scaleDown": {
        "stabilizationWindowSeconds": 300,
        "policies": [{"type": "Pods", "value": 1, "periodSeconds": 60}],
    },
}


def hpa(s: K8sSettings, g: Group) -> Obj:
    name = group_name(s, g)
    return {
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": _meta(s, name, "model", g.slug),
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": name},
            "minReplicas": s.replicas,
            "maxReplicas": s.max_replicas,
            "metrics": [
                {
                    "type": "Pods",
                    "pods": {
                        "metric": {"name": SCALE_METRIC},
                        "target": {
                            "type": "AverageValue",
                            "averageValue": _quantity(scale_target(s)),
                        },
                    },
                }
            ],
            "behavior": BEHAVIOR,
        },
    }


def scaled_object(s: K8sSettings, g: Group) -> Obj:
    name = group_name(s, g)
    ns = f'namespace="{s.namespace}",' if s.namespace else ""
    return {
        "apiVersion": "keda.sh/v1alpha1",
        "kind": "ScaledObject",
        "metadata": _meta(s, name, "model", g.slug),
        "spec": {
            "scaleTargetRef": {"name": name},
            "minReplicaCount": s.replicas,
            "maxReplicaCount": s.max_replicas,
            "pollingInterval": 15,
            "cooldownPeriod": 300,
            "advanced": {"horizontalPodAutoscalerConfig": {"behavior": BEHAVIOR}},
            "triggers": [
                {
                    "type": "prometheus",
                    "metadata": {
                        "serverAddress": s.prometheus_url,
                        "query": f'sum({SCALE_METRIC}{{{ns}pod=~"{name}-.*"}})',
                        "threshold": _quantity(scale_target(s)),
                    },
                }
            ],
        },
    }


def route_deployment(s: K8sSettings, groups: list[Group]) -> Obj:
    import json

    backends = [
        {"url": f"http://{group_name(s, g)}:{s.port}", "name": g.slug, "pairs": list(g.pairs)}
        for g in groups
    ]
    env = {
        "DRAGOMAN_BACKENDS": json.dumps(backends),
        "DRAGOMAN_HOST": "0.0.0.0",
        "DRAGOMAN_PORT": str(s.route_port),
        # One backend is a whole group's Service: let it carry every pod's admitted work.
        "DRAGOMAN_MAX_IN_FLIGHT": str((s.admission_limit() or 64) * s.max_replicas),
        "DRAGOMAN_TIMEOUT": str(s.request_timeout),
        "DRAGOMAN_LOG_LEVEL": s.log_level,
        "DRAGOMAN_LOG_FORMAT": s.log_format,  # the servers' pods get it with their settings
    }
    name = f"{s.name}-route"
    pod: Obj = {
        "terminationGracePeriodSeconds": grace_seconds(s),
        "containers": [
            {
                "name": "route",
                "image": s.image,
                "command": ["dragoman", "route"],
                # the metrics key guards the proxy's view of the fleet as the servers' own
                "env": _env(env)
                + [e for e in _secret_env(s) if e["name"] == "DRAGOMAN_METRICS_KEY"],
                "ports": [{"name": "http", "containerPort": s.route_port, "protocol": "TCP"}],
                "readinessProbe": _probe("/ready", 5, 2, 2),
                "livenessProbe": _probe("/health", 10, 3, 5),
                "lifecycle": {"preStop": {"sleep": {"seconds": s.prestop_seconds}}},
                "resources": _resources(s.route_cpu, s.route_memory_mib),
            }
        ],
    }
    return _deployment(s, name, "route", None, s.route_replicas, pod)


def all_objects(s: K8sSettings, groups: list[Group], size: PodSize) -> dict[str, list[Obj]]:
    """File name -> the objects it holds."""
    files: dict[str, list[Obj]] = {}
    for g in groups:
        name = group_name(s, g)
        objs = [
            model_deployment(s, g, size),
            service(s, name, "model", g.slug, s.port),
            pdb(s, name, "model", g.slug),
        ]
        if s.autoscaler == "hpa":
            objs.append(hpa(s, g))
        elif s.autoscaler == "keda":
            objs.append(scaled_object(s, g))
        files[f"model-{g.slug}.yaml"] = objs
    route = f"{s.name}-route"
    files["route.yaml"] = [
        route_deployment(s, groups),
        service(s, route, "route", None, s.route_port),
        pdb(s, route, "route", None),
    ]
    return files
