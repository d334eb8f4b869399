"""Typed dependencies: handlers reach settings, metrics and the engine only through these."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from dragoman.api.lifecycle import EngineHost
from dragoman.engine.protocol import Translator
from dragoman.metrics import Metrics
from dragoman.settings import ServeSettings


def get_settings(request: Request) -> ServeSettings:
    settings: ServeSettings = request.app.state.settings
    return settings


def get_metrics(request: Request) -> Metrics:
    metrics: Metrics = request.app.state.metrics
    return metrics


def get_host(request: Request) -> EngineHost:
    host: EngineHost = request.app.state.engine_host
    return host


def get_translator(host: Annotated[EngineHost, Depends(get_host)]) -> Translator:
    return host.translator()  # raises EngineNotReady / EngineDead -> 503


SettingsDep = Annotated[ServeSettings, Depends(get_settings)]
MetricsDep = Annotated[Metrics, Depends(get_metrics)]
HostDep = Annotated[EngineHost, Depends(get_host)]
TranslatorDep = Annotated[Translator, Depends(get_translator)]
