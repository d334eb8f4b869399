"""`dragoman deploy ray`: write the Serve config or RayService manifest, or start (or attach to)
a Ray cluster and run the app on --host/--port until SIGTERM or Ctrl-C."""

from __future__ import annotations

import logging
import os
import signal
import sys
import threading
import time
from collections.abc import Callable

from dragoman.deploy.ray.settings import RaySettings
from dragoman.errors import ConfigError

log = logging.getLogger(__name__)


def _require_ray() -> None:
    try:
        import ray  # noqa: F401
        from ray import serve  # noqa: F401
    except ImportError:
        raise ConfigError(
            "Ray Serve is not installed: pip install 'dragoman[ray]' (ray[serve]==2.60.0)"
        ) from None


def deploy_ray(settings: RaySettings) -> None:
    from dragoman.writable import check_file

    for path, flag in (
        (settings.config_out, "--config-out"),
        (settings.rayservice_out, "--rayservice-out"),
    ):
        if path is not None:
            check_file(path, flag)
    _require_ray()
    logging.getLogger("dragoman").setLevel(settings.log_level.upper())
    if settings.config_out or settings.rayservice_out:
        from dragoman.deploy.ray.config import (
            RAYSERVICE_NAME,
            keys_secret,
            rayservice,
            secret_env,
            serve_config,
            write_yaml,
        )

        if settings.config_out:
            write_yaml(settings.config_out, serve_config(settings))
            print(f"wrote {settings.config_out}: serve deploy {settings.config_out}")
        if settings.rayservice_out:
            write_yaml(settings.rayservice_out, rayservice(settings))
            print(f"wrote {settings.rayservice_out}: kubectl apply -f {settings.rayservice_out}")
        secrets = secret_env(settings)
        if secrets:
            where = "set them in the environment of the cluster's processes (`ray start`)"
            if settings.rayservice_out:
                entries = ", ".join(secrets.values())
                secret = keys_secret(RAYSERVICE_NAME)
                where += f"; the RayService's pods read the Secret {secret} ({entries})"
            print(f"not written: {', '.join(secrets)}: {where}", file=sys.stderr)
        return
    setup_logs(settings)
    run(settings)


def setup_logs(settings: RaySettings) -> None:
    """This process's log lines as `dragoman serve`'s (--log-format); Ray's and Serve's
    records here too with json: their loggers write text through handlers of their own (set
    up as ray and ray.serve are imported) and do not propagate. The replicas' lines are
    Serve's, in the format each deployment's logging_config gives (app.serve_logging)."""
    from dragoman.logs import setup

    setup(settings.log_format)  # before a local cluster starts: its processes take the env
    if settings.log_format == "json":
        for name in ("ray", "ray.serve"):
            logger = logging.getLogger(name)
            logger.handlers.clear()
            logger.propagate = True


def local_cpus(settings: RaySettings) -> int:
    """Logical CPUs of a local cluster: --ray-num-cpus, else this machine's, raised so that the
    ingress and every model's min_replicas fit (Ray's CPUs only decide placement; on a 2-core
    host one real-engine replica alone asks for 2, and the ingress for 1 more)."""
    import math

    from dragoman.deploy.ray.app import replica_cpus

    if settings.ray_num_cpus is not None:
        return settings.ray_num_cpus
    need = replica_cpus(settings)
    return max(os.cpu_count() or 1, math.ceil(need))


def run(settings: RaySettings) -> None:
    import ray
    from ray import serve

    from dragoman.deploy.ray.app import build_application

    local = settings.ray_address is None
    if local:  # read by Serve's processes as they start: before the cluster does
        try:
            env = settings.cluster_env()
        except FileNotFoundError as exc:
            raise ConfigError(f"--ray-ingress haproxy: {exc}; or --ray-ingress proxy") from None
        for key, value in env.items():
            os.environ.setdefault(key, value)
    ray.init(
        # "local": a new cluster even where `ray start` left one for ray.init() to join.
        address=settings.ray_address or "local",
        num_cpus=local_cpus(settings) if local else None,
        object_store_memory=settings.ray_object_store_mib * 2**20 if local else None,
        include_dashboard=False if local else None,
    )
    stop = threading.Event()

    def on_signal(sig: int, frame: object) -> None:
        # SIGTERM drains; a second one, or Ctrl-C (whose SIGINT also reached the Ray processes
        # of our process group), stops at once.
        if sig == signal.SIGTERM and not stop.is_set():
            stop.set()
        else:
            raise KeyboardInterrupt

    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, on_signal)
    try:
        serve.start(http_options={"host": settings.host, "port": settings.port})
        started = time.monotonic()
        serve.run(build_application(settings), name=settings.app_name, route_prefix="/")
        _wait_routed(settings, deadline=time.monotonic() + 60)
        print(
            f"dragoman on Ray Serve: http://{settings.host}:{settings.port}/ "
            f"(app {settings.app_name!r} ready in {time.monotonic() - started:.1f} s)",
            file=sys.stderr,
            flush=True,
        )
        stop.wait()
        # Replicas stop gracefully: each waits for its requests (up to the drain time) before
        # its engine shuts down.
        _bounded(lambda: serve.delete(settings.app_name), settings.drain_seconds + 30)
    finally:
        if local:
            _bounded(serve.shutdown, 30)
            ray.shutdown()


def _wait_routed(settings: RaySettings, deadline: float) -> None:
    """Behind HAProxy, until it sends traffic to as many replicas as the ingress deployment
    runs (Serve tells it seconds after they run): ready means every replica takes a share,
    and a replica lost then has another to replay its requests on (haproxy.routed)."""
    from ray import serve
    from ray.serve.schema import ReplicaState

    from dragoman.deploy.ray import haproxy
    from dragoman.deploy.ray.app import ingress_deployment

    if not haproxy.fronts():
        return
    ingress = ingress_deployment(settings)
    while time.monotonic() < deadline:
        app = serve.status().applications.get(settings.app_name)
        states = app.deployments[ingress].replica_states if app else {}
        routed = haproxy.routed(settings.app_name)
        if routed is not None and len(routed) == states.get(ReplicaState.RUNNING, -1):
            return
        time.sleep(0.2)
    log.warning("HAProxy does not route to every ingress replica yet; serving anyway")


def _bounded(call: Callable[[], object], seconds: float) -> None:
    """Run a shutdown step for at most `seconds`: with a cluster half gone (its raylet killed
    by the same Ctrl-C) Serve's calls wait forever."""
    worker = threading.Thread(target=call, daemon=True)
    worker.start()
    worker.join(seconds)
    if worker.is_alive():
        log.warning("Ray did not answer within %g s; leaving without it", seconds)
