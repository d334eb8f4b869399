"""Files for running the app with Ray's own tools: the Serve config (`serve deploy FILE`,
checked against Ray's `ServeDeploySchema`, the schema `serve deploy` itself uses) and a KubeRay
RayService manifest that embeds it. Both are made from the same settings as `dragoman serve`."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import yaml

from dragoman.deploy.k8s.groups import STORE_URLS
from dragoman.deploy.ray.app import (
    build_application,
    deployment_options,
    layout,
    resources,
)
from dragoman.deploy.ray.groups import model_groups
from dragoman.deploy.ray.settings import RaySettings
from dragoman.service.cache_store import has_password

IMPORT_PATH = "dragoman.deploy.ray.app:build"
RAY_VERSION = "2.60.0"
SERVE_PORT = 8000
RAYSERVICE_NAME = "dragoman"

# Not application settings: where the cluster is and which files to write. Secrets never go
# into a file (secret_env below).
_NOT_ARGS = {
    "ray_address",
    "ray_num_cpus",
    "ray_object_store_mib",
    "config_out",
    "rayservice_out",
    "image",
    "host",
    "port",
    "api_keys",
    "metrics_key",
}


def secret_env(settings: RaySettings) -> dict[str, str]:
    """The secrets these settings hold, each as the DRAGOMAN_ variable `build` reads it from
    and its entry in the keys Secret (`deploy k8s`'s names): the keys, and a store URL with a
    password (one without stays in the args). Never written into the config, nor into its
    runtime_env (whose env_vars are written too): `build` reads them from the environment of
    the cluster's processes where it runs (`ray start`'s; the RayService's pods take them from
    the Secret)."""
    held = {"api_keys": "api-keys", "metrics_key": "metrics-key"}
    held = {f: key for f, key in held.items() if getattr(settings, f)}
    held |= {f: key for f, key in STORE_URLS.items() if has_password(getattr(settings, f))}
    return {f"DRAGOMAN_{f.upper()}": key for f, key in held.items()}


def app_args(settings: RaySettings) -> dict[str, Any]:
    """The settings given (flags, variables, config file), as `build`'s arguments; what was
    left at its default is derived again where the app is built. Secrets are left out:
    `build` reads them from the environment (secret_env)."""
    secrets = {f for f in STORE_URLS if has_password(getattr(settings, f))}
    return settings.model_dump(mode="json", exclude_unset=True, exclude=_NOT_ARGS | secrets)


def serve_config(settings: RaySettings, host: str | None = None, port: int | None = None) -> dict:
    """A Serve config (ServeDeploySchema) for this app; its deployment options are the ones
    `build` sets, written out so an operator can see and change them in one place."""
    from ray.serve.schema import ServeDeploySchema

    deployments = [{"name": name, **o} for name, o in deployment_options(settings).items()]
    config = {
        "proxy_location": "EveryNode",
        "http_options": {"host": host or settings.host, "port": port or settings.port},
        "applications": [
            {
                "name": settings.app_name,
                "route_prefix": "/",
                "import_path": IMPORT_PATH,
                "args": app_args(settings),
                "runtime_env": {"env_vars": settings.serve_env()},
                "deployments": deployments,
            }
        ],
    }
    ServeDeploySchema.model_validate(config)  # fails loudly on a field Ray does not know
    build_application(settings)  # and on settings the app cannot be built from
    return config


def rayservice(settings: RaySettings, name: str = RAYSERVICE_NAME) -> dict:
    """A KubeRay RayService (ray.io/v1): a head that runs no replicas, and one worker group
    whose pods each hold one model replica; KubeRay adds pods as Serve adds replicas."""
    config = serve_config(settings, host="0.0.0.0", port=SERVE_PORT)
    res = resources(settings)
    groups = len(model_groups(settings))
    # One pod per model replica; in the split layout the ingress shares one of them.
    ingress = settings.ingress_cpus if layout(settings) == "split" else 0.0
    cpus = math.ceil(res.cpus + ingress)
    worker_resources = {
        "requests": {"cpu": str(cpus), "memory": f"{settings.worker_memory_gib:g}Gi"},
        "limits": {"cpu": str(cpus), "memory": f"{settings.worker_memory_gib:g}Gi"},
    }
    if res.gpus:
        worker_resources["limits"]["nvidia.com/gpu"] = str(math.ceil(res.gpus))

    # The app is built on any of the cluster's nodes: each pod gets the secrets `build` reads.
    secrets = secret_env(settings)

    def container(role: str, resources: dict[str, Any], ports: list[int]) -> dict[str, Any]:
        env = [  # each its own: a shared list is written as a YAML alias
            {"name": var, "valueFrom": {"secretKeyRef": {"name": keys_secret(name), "key": key}}}
            for var, key in secrets.items()
        ]
        return {
            "name": f"ray-{role}",
            "image": settings.image,
            "resources": resources,
            "ports": [{"containerPort": p} for p in ports],
            **({"env": env} if env else {}),
        }

    head_resources = {"requests": {"cpu": "1", "memory": "4Gi"}, "limits": {"memory": "4Gi"}}
    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayService",
        "metadata": {"name": name},
        "spec": {
            "serveConfigV2": _Block(yaml.safe_dump(config, sort_keys=False)),
            "rayClusterConfig": {
                "rayVersion": RAY_VERSION,
                "enableInTreeAutoscaling": settings.max_replicas > settings.min_replicas,
                "headGroupSpec": {
                    # No replicas on the head: losing a model replica must not take the GCS.
                    "rayStartParams": {"num-cpus": "0"},
                    "template": {
                        "spec": {
                            "containers": [
                                container("head", head_resources, [6379, 8265, 10001, 8000])
                            ]
                        }
                    },
                },
                "workerGroupSpecs": [
                    {
                        "groupName": "models",
                        "replicas": settings.min_replicas * groups,
                        "minReplicas": settings.min_replicas * groups,
                        "maxReplicas": settings.max_replicas * groups,
                        "rayStartParams": {},
                        "template": {
                            "spec": {"containers": [container("worker", worker_resources, [8000])]}
                        },
                    }
                ],
            },
        },
    }


def keys_secret(name: str) -> str:
    """The Secret a RayService named `name` takes its secrets from (`deploy k8s`'s name)."""
    return f"{name}-keys"


class _Block(str):
    """A string written as a YAML literal block (`|`): the embedded Serve config stays
    readable in the manifest."""


class _Dumper(yaml.SafeDumper):
    pass


_Dumper.add_representer(
    _Block, lambda d, s: d.represent_scalar("tag:yaml.org,2002:str", str(s), style="|")
)


def dump_yaml(document: dict) -> str:
    return yaml.dump(document, Dumper=_Dumper, sort_keys=False)


def write_yaml(path: Path, document: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(dump_yaml(document))
