"""The ingress deployment: dragoman's own FastAPI app (native, LibreTranslate, DeepL, OpenAI,
the web pages, /metrics), built inside each ingress replica around the gateway translator."""

from __future__ import annotations

import math
from contextlib import AbstractAsyncContextManager
from typing import Any

from fastapi import FastAPI

from dragoman.deploy.ray.gateway import ReplicaView, open_gateway
from dragoman.deploy.ray.groups import ModelGroup, model_groups
from dragoman.deploy.ray.retry import RetryPolicy
from dragoman.deploy.ray.settings import RaySettings
from dragoman.engine.protocol import Translator
from dragoman.service.admission import Admission


def scale_admission(
    admission: Admission, settings: RaySettings, groups: list[ModelGroup], running: dict[str, int]
) -> None:
    """Admission bounds what this ingress replica holds open: one server's bound per live
    model replica, shared among the ingress replicas. The deadline estimate's capacity follows
    the engines' combined batch width."""
    replicas = sum(running.get(g.deployment, 0) for g in groups)
    share = max(1, replicas) / settings.ingress_replicas
    admission.capacity = max(settings.max_num_seqs, math.ceil(settings.max_num_seqs * share))
    if admission.limit:  # 0 is no bound, and stays so
        admission.limit = max(settings.max_items, math.ceil(settings.admission_limit() * share))


class Ingress:
    """Serve builds the app after this constructor (`__serve_build_asgi_app__`), so the app
    is made from the settings and handles the replica was given."""

    def __init__(self, settings: RaySettings, handles: dict[str, Any]) -> None:
        self.settings = settings
        self.handles = handles

    def __serve_build_asgi_app__(self) -> FastAPI:
        from ray import serve

        from dragoman.api.app import build_app

        settings = self.settings
        groups = model_groups(settings)
        roots = {g.key: g.root(settings) for g in groups}
        view = ReplicaView(serve.get_replica_context().app_name, settings.status_interval)
        policy = RetryPolicy(attempts=settings.retry_attempts)

        def factory() -> AbstractAsyncContextManager[Translator]:
            return open_gateway(groups, self.handles, roots, view, policy)

        # No on_fatal: the ingress has no engine to die; a model's trouble is its own 503s.
        # Serve answers with the request's id itself (edge.py: echo_id).
        app = build_app(settings, factory, echo_request_id=False)
        admission: Admission = app.state.admission
        view.on_change(lambda running: scale_admission(admission, settings, groups, running))
        return app

    async def check_health(self) -> None:
        """A no-op: the ingress stays up whatever one model does (ray PR #63065)."""
        return None
