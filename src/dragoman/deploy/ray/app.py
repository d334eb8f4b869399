"""The Ray Serve application: one deployment per model group and one ingress (layout `split`),
or one deployment whose replicas are each a whole server (layout `whole`; `auto` takes it for
one model group). `build` is the
import path Ray's own tools take (`serve run dragoman.deploy.ray.app:build`, a Serve config's
`import_path`); `dragoman deploy ray` calls `build_application` with its parsed settings."""

from __future__ import annotations

from typing import Any, Literal

from dragoman.deploy.ray import haproxy
from dragoman.deploy.ray.groups import ReplicaResources, model_groups, replica_resources
from dragoman.deploy.ray.settings import RaySettings

INGRESS = "ingress"
SERVER = "server"


def layout(settings: RaySettings) -> Literal["split", "whole"]:
    """--ray-layout with `auto` decided: `whole` for one model group behind Serve's HAProxy
    ingress (one deployment scales as the split layout's only model deployment would, a
    request reaches its engine with no Ray call, and HAProxy sends a request whose replica
    died to another); `split` for several groups (each model scales on its own load) and
    behind Serve's Python proxy, which does not retry: there only the split layout's ingress
    retries a text whose replica died. Decided where the app is built, from the environment
    the cluster's processes got (`RaySettings.cluster_env()` for a cluster started here)."""
    if settings.ray_layout != "auto":
        return settings.ray_layout
    one = len(model_groups(settings)) == 1
    return "whole" if one and haproxy.fronts() else "split"


def ingress_deployment(settings: RaySettings) -> str:
    """The deployment whose replicas take the app's HTTP requests."""
    return SERVER if layout(settings) == "whole" else INGRESS


def resources(settings: RaySettings) -> ReplicaResources:
    from dragoman.host import detect

    return replica_resources(settings, detect(), settings.replica_cpus, settings.replica_gpus)


def serve_logging(settings: RaySettings) -> dict[str, str]:
    """Serve's logging config of every deployment (--log-format, --log-level): a replica's
    records of Serve's logger, and on the fast path what its process writes to stdout and
    stderr, go to Serve's log file of the replica, as Serve's JSON with `json`."""
    return {"encoding": settings.log_format.upper(), "log_level": settings.log_level.upper()}


def model_options(settings: RaySettings, res: ReplicaResources) -> dict[str, Any]:
    """Deployment options of every model group: Serve's defaults fit a tiny web handler, not an
    engine that batches max_num_seqs texts."""
    actor: dict[str, Any] = {"num_cpus": res.cpus}
    if res.gpus:
        actor["num_gpus"] = res.gpus
    options: dict[str, Any] = {
        "max_ongoing_requests": settings.replica_max_ongoing(),
        "max_queued_requests": settings.queued_limit(),
        "health_check_period_s": settings.health_check_period_s or settings.engine_check_interval,
        "health_check_timeout_s": settings.health_check_timeout_s,
        # Serve waits for a stopping replica's requests, up to this; then the engine shuts down.
        "graceful_shutdown_wait_loop_s": 1.0,
        "graceful_shutdown_timeout_s": settings.drain_seconds + 5.0,
        "ray_actor_options": actor,
        "logging_config": serve_logging(settings),
    }
    if settings.min_replicas == settings.max_replicas:
        options["num_replicas"] = settings.min_replicas
    else:
        options["autoscaling_config"] = {
            "min_replicas": settings.min_replicas,
            "initial_replicas": settings.min_replicas,
            "max_replicas": settings.max_replicas,
            "target_ongoing_requests": settings.target_ongoing(),
            "upscale_delay_s": settings.upscale_delay_s,
            "downscale_delay_s": settings.downscale_delay_s,
            "look_back_period_s": settings.look_back_period_s,
        }
    return options


def ingress_options(settings: RaySettings) -> dict[str, Any]:
    return {
        "num_replicas": settings.ingress_replicas,
        "max_ongoing_requests": settings.ingress_max_ongoing_requests,
        "graceful_shutdown_wait_loop_s": 1.0,
        "graceful_shutdown_timeout_s": settings.drain_seconds + 5.0,
        "ray_actor_options": {"num_cpus": settings.ingress_cpus},
        "logging_config": serve_logging(settings),
    }


def server_options(settings: RaySettings, res: ReplicaResources) -> dict[str, Any]:
    """Options of the `whole` layout's one deployment: a model deployment's (resources,
    health, drain, autoscaling on ongoing requests), taking HTTP requests as an ingress does
    (each may carry many texts; the app's own admission answers beyond its bound)."""
    return {
        **model_options(settings, res),
        "max_ongoing_requests": settings.ingress_max_ongoing_requests,
    }


def deployment_options(settings: RaySettings) -> dict[str, dict[str, Any]]:
    """Every deployment of the app by name, with its options: what `build` sets."""
    res = resources(settings)
    if layout(settings) == "whole":
        return {SERVER: server_options(settings, res)}
    model = model_options(settings, res)
    return {
        INGRESS: ingress_options(settings),
        **{g.deployment: model for g in model_groups(settings)},
    }


def replica_cpus(settings: RaySettings) -> float:
    """Logical CPUs of the app's replicas at min_replicas: what a cluster must hold."""
    res = resources(settings)
    if layout(settings) == "whole":
        return res.cpus * settings.min_replicas
    groups = len(model_groups(settings))
    return settings.ingress_cpus * settings.ingress_replicas + res.cpus * (
        settings.min_replicas * groups
    )


def build_application(settings: RaySettings) -> Any:
    """The bound application (a `ray.serve.Application`)."""
    from ray import serve

    if layout(settings) == "whole":
        from dragoman.deploy.ray.server import ServerReplica

        whole: Any = serve.deployment(serve.ingress()(ServerReplica))
        return whole.options(name=SERVER, **server_options(settings, resources(settings))).bind(
            settings
        )

    from dragoman.deploy.ray.ingress import Ingress
    from dragoman.deploy.ray.replica import ModelReplica

    # Typed as Any: serve.deployment's overloads do not tell a class from a function to mypy.
    model: Any = serve.deployment(ModelReplica)
    ingress: Any = serve.deployment(serve.ingress()(Ingress))
    options = model_options(settings, resources(settings))
    handles = {
        g.key: model.options(name=g.deployment, **options).bind(settings, g)
        for g in model_groups(settings)
    }
    return ingress.options(name=INGRESS, **ingress_options(settings)).bind(settings, handles)


def build(args: dict[str, Any]) -> Any:
    """Serve's application builder: `args` are settings fields (a Serve config's `args`, or
    `key=value` words after `serve run`), over DRAGOMAN_ variables and DRAGOMAN_CONFIG."""
    from dragoman.all_settings import load_all

    load_all()  # a DRAGOMAN_CONFIG file's keys are checked against every command's
    return build_application(RaySettings(**args))
