"""Model groups: one per model of the server's settings (a `[[models]]` entry, or the single
`--model`) with the language pairs it serves, so pairs that share a model share its replicas.
Each deployment makes one unit of a group: a Ray Serve deployment (deploy/ray/groups.py), a
Kubernetes Deployment (deploy/k8s/groups.py)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from dragoman.languages import Pair, pairs_from_languages
from dragoman.service.settings import ServeSettings


@dataclass(frozen=True)
class ModelGroup:
    key: str
    """Served name: in answers, /v1/models and /v1/languages."""
    model: str
    """Catalogue name, local directory or hub id."""
    prompt: Literal["chat", "few-shot"]
    languages: tuple[str, ...]
    pairs: tuple[Pair, ...]


def model_groups(settings: ServeSettings) -> list[ModelGroup]:
    """One group per `[[models]]` entry, else one for `--model` with every pair among its
    languages (as `dragoman serve` serves them)."""
    from dragoman.api.serve import languages_for
    from dragoman.models.catalogue import CATALOGUE

    if settings.models:
        routes = settings.model_routes()
        groups = []
        for spec in settings.models:
            pairs = tuple(sorted(p for p, name in routes.items() if name == spec.name))
            langs = tuple(sorted({c for p in pairs for c in p}))
            groups.append(ModelGroup(spec.name, spec.model, spec.prompt_format(), langs, pairs))
        return groups
    langs = languages_for(settings.model, settings.languages)
    entry = CATALOGUE.get(settings.model)
    name = f"echo:{settings.model}" if settings.architecture == "echo" else settings.model
    pairs = tuple(sorted(pairs_from_languages(langs)))
    return [ModelGroup(name, settings.model, entry.prompt if entry else "chat", langs, pairs)]
