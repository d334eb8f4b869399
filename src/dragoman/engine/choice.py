"""`--architecture host` made concrete: which engine this machine serves with, and why
(the rule is `plan.choose_engine`; this gathers what it needs to know)."""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeVar

from dragoman.engine.host_defaults import Choice, choose_engine
from dragoman.errors import DragomanError

if TYPE_CHECKING:
    from dragoman.settings import EngineSettings

S = TypeVar("S", bound="EngineSettings")


def has_llamacpp(settings: EngineSettings) -> bool:
    from dragoman.engine.llamacpp import server_launcher

    try:
        server_launcher(settings)
    except DragomanError:
        return False
    return True


def resolve_architecture(settings: S) -> tuple[S, Choice]:
    """The settings with `architecture` decided for this host (unchanged when set), and why."""
    architecture = str(getattr(settings, "architecture", "continuous"))
    if architecture != "host":
        return settings, Choice(architecture, "set explicitly")
    from dragoman.engine.vllm_engine import is_cpu_platform
    from dragoman.host import detect
    from dragoman.models.catalogue import CATALOGUE

    host = detect()
    choice = choose_engine(
        "host",
        host,
        not is_cpu_platform(),
        gguf=settings.model in CATALOGUE,
        one_model=not getattr(settings, "models", None),
        llamacpp=has_llamacpp(settings),
    )
    return settings.model_copy(update={"architecture": choice.value}), choice
