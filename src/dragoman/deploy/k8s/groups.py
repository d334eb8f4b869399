"""Model groups as Kubernetes sees them: one Deployment per model group (deploy/groups.py), its
pods configured by DRAGOMAN_ environment variables that parse back into the same settings, and
the pairs the route sends it.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, SecretStr

from dragoman.deploy.groups import model_groups as groups_of
from dragoman.service.cache_store import has_password
from dragoman.service.settings import ServeSettings

DATA_DIR = "/var/lib/dragoman"
# Serve fields the manifests set themselves, or that cannot travel as a plain variable.
_NOT_COPIED = {"host", "port", "data_dir", "models", "model", "languages", "api_keys_file"}
STORE_URLS = {"cache_url": "cache-url", "glossary_url": "glossary-url"}
"""Store URLs, by their entry in the keys Secret: one with a password comes from there."""


@dataclass(frozen=True)
class Group:
    key: str
    """Served model name (answers, /v1/languages)."""
    model: str
    """Catalogue name, or a model directory inside the image."""
    slug: str
    """DNS-1123 label for object names."""
    pairs: tuple[str, ...]
    """`source-target`, as the route's backends list them."""
    env: dict[str, str]
    """DRAGOMAN_ variables of this group's pods that differ from serve's defaults."""


def slug(text: str) -> str:
    s = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
    return s or "model"


def env_value(value: Any) -> str:
    """A setting as the DRAGOMAN_ variable pydantic-settings parses back: JSON for lists,
    objects and booleans, plain text for strings and numbers."""
    if isinstance(value, str):
        return value
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, BaseModel):
        return value.model_dump_json()
    if isinstance(value, list):
        return json.dumps(
            [v.model_dump(mode="json") if isinstance(v, BaseModel) else v for v in value]
        )
    return json.dumps(value)


def changed_env(settings: ServeSettings) -> dict[str, str]:
    """DRAGOMAN_<FIELD> for every serve setting not at its default (secrets excluded: they
    come from a Secret, as do store URLs with a password)."""
    out: dict[str, str] = {}
    for name, field in ServeSettings.model_fields.items():
        value = getattr(settings, name)
        if name in _NOT_COPIED or isinstance(value, SecretStr) or name == "api_keys":
            continue
        if name in STORE_URLS and has_password(value):
            continue
        default = field.get_default(call_default_factory=True)
        if value != default:
            out[f"DRAGOMAN_{name.upper()}"] = env_value(value)
    return out


def model_groups(settings: ServeSettings) -> list[Group]:
    common = changed_env(settings)
    specs = {spec.name: spec for spec in settings.models}
    groups: list[Group] = []
    for g in groups_of(settings):
        if settings.models:
            name = g.key
            env = {**common, "DRAGOMAN_MODELS": env_value([specs[g.key]])}
        else:  # named by --model itself, without echo's `echo:` prefix
            name = settings.model
            env = {**common, "DRAGOMAN_MODEL": settings.model}
            if settings.languages:
                env["DRAGOMAN_LANGUAGES"] = env_value(settings.languages)
        pairs = tuple(f"{a}-{b}" for a, b in g.pairs)
        groups.append(Group(name, g.model, slug(name), pairs, env))
    slugs = [g.slug for g in groups]
    if len(set(slugs)) != len(slugs):
        raise ValueError(f"models: names {slugs} collide once made Kubernetes names")
    return groups
