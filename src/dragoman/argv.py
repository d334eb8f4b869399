"""Settings from command-line arguments: one call that every command, and every module run on
its own (`python -m dragoman.plan.footprint`, the llama.cpp build), parses its settings with.
It sits below the commands so that nothing but the entry point imports the CLI."""

from __future__ import annotations

from typing import TypeVar

from pydantic_settings import BaseSettings

S = TypeVar("S", bound=BaseSettings)


def parse(cls: type[S], args: list[str], prog: str) -> S:
    """`cls` from flags, DRAGOMAN_ environment variables and the TOML config, as `prog`."""
    return cls(_cli_parse_args=args, _cli_prog_name=prog)
