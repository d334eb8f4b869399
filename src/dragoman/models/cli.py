"""`dragoman model prepare` and `dragoman model list`."""

from __future__ import annotations

import time
from collections import Counter

from rich.console import Console
from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from dragoman.errors import ConfigError, ModelError
from dragoman.interrupts import stops_as_ctrl_c
from dragoman.models.catalogue import CATALOGUE
from dragoman.models.prepare import chunk_files, is_prepared, model_dir, prepare
from dragoman.settings import ModelSettings
from dragoman.writable import check_dir


class PrepareSettings(ModelSettings):
    verify: bool = False
    """Hash every prepared file of --model again (each weights form, the GGUF files) against
    the digest recorded when it was made, and say which are bad (exit 1); start-up checks
    sizes only. Nothing is made."""

    force: bool = False
    """Remove every prepared file of --model first, then prepare it as without the flag: a
    file --verify calls bad, or one prepared by an older version (no digests), made again.
    Stop the servers that use the model first; without the model's packages, nothing is
    removed."""


def run_prepare(settings: PrepareSettings) -> None:
    """SIGTERM and SIGHUP (a supervisor's stop, an init container's deadline, a closed
    terminal) stop it as Ctrl-C does: its work directory is removed and it exits 130."""
    if settings.verify and settings.force:
        raise ConfigError("--verify and --force: one at a time (verify, then --force if bad)")
    if settings.verify:
        _verify(settings)
        return
    with stops_as_ctrl_c():
        _prepare(settings)


def _in_catalogue(settings: ModelSettings) -> None:
    if settings.model not in CATALOGUE:
        # wrong input, as a mistyped flag is (exit 2)
        raise ConfigError(
            f"{settings.model!r} is not in the catalogue ({', '.join(CATALOGUE)}); a local "
            "model directory needs no preparation (see `dragoman model list`)"
        )


def _verify(settings: ModelSettings) -> None:
    """Each prepared file hashed again, a line each on stdout (`ok` or `BAD` and why, with its
    size and time); any bad: exit 1, saying what to run."""
    from dragoman.models.verify import check, targets

    _in_catalogue(settings)
    found = targets(CATALOGUE[settings.model], settings.data_dir)
    if not found:
        raise ModelError(
            f"{settings.model} is not prepared in {settings.data_dir}: nothing to verify; "
            "run `dragoman model prepare`"
        )
    started = time.monotonic()
    hashed = 0
    states: Counter[str] = Counter()
    for target in found:
        begun = time.monotonic()
        verdict = check(target)
        states[verdict.state] += 1
        size = target.path.stat().st_size if verdict.state == "ok" else 0
        hashed += size
        took = f"{size / 1e6:9.1f} MB {time.monotonic() - begun:6.1f} s"
        if verdict.state == "ok":
            print(f"ok   {took}  {verdict.path}", flush=True)
        else:
            print(f"BAD  {verdict.path}: {verdict.detail}", flush=True)
    seconds = time.monotonic() - started
    print(f"{states['ok']} of {len(found)} ok; {hashed / 1e6:.1f} MB hashed in {seconds:.1f} s")
    wrong = [f"{states['bad']} bad"] if states["bad"] else []
    if states["older"]:
        wrong.append(f"{states['older']} prepared by an older version (no digests)")
    if wrong:
        raise ModelError(
            f"{settings.model}: {' and '.join(wrong)} of {len(found)} checked: run "
            f"`dragoman model prepare --force --model {settings.model}` to make them again"
        )


def _prepare(settings: PrepareSettings) -> None:
    console = Console(stderr=True)
    _in_catalogue(settings)
    from dragoman.engine.vllm_engine import weights_for

    weights = weights_for(settings)
    if settings.force:
        from dragoman.models.verify import remove_prepared

        # What it removes is made again from the model's packages (the kept GGUF goes too):
        # without them, nothing is removed.
        try:
            chunk_files(CATALOGUE[settings.model])
        except ModelError as exc:
            raise ModelError(f"{exc.message}; --force removed nothing") from exc
        for path in remove_prepared(CATALOGUE[settings.model], settings.data_dir):
            console.print(f"removed {path}")
    target = model_dir(settings.data_dir, settings.model, weights)
    if is_prepared(target, CATALOGUE[settings.model].sha256):
        prepare(settings.model, settings.data_dir, weights=weights)  # at once: tidies only
        console.print(f"[green]ready[/] {settings.model} ({weights} weights) at {target}")
        _llamacpp_gguf(settings, console)
        return
    check_dir(settings.data_dir, "--data-dir")  # before any work: a read-only volume, a typo
    started = time.monotonic()
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        DownloadColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=False,
    ) as bar:
        tasks: dict[str, object] = {}

        def progress(stage: str, done: int, total: int) -> None:
            if stage not in tasks:
                label = {"assemble": "assemble + verify", "convert": "convert to safetensors"}
                tasks[stage] = bar.add_task(label.get(stage, stage), total=total)
            bar.update(tasks[stage], completed=done, total=total)  # type: ignore[arg-type]

        path = prepare(settings.model, settings.data_dir, progress, weights)
    console.print(
        f"[green]ready[/] {settings.model} ({weights} weights) at {path} "
        f"({time.monotonic() - started:.0f} s)"
    )
    _llamacpp_gguf(settings, console)


def _llamacpp_gguf(settings: ModelSettings, console: Console) -> None:
    """On a host that serves with llama.cpp (`dragoman serve`'s settings from the environment
    or config file decide), the GGUF it runs, made now rather than at the server's first start
    (a Kubernetes init container runs `model prepare`)."""
    from dragoman.engine.choice import resolve_architecture
    from dragoman.engine.llamacpp import gguf_form
    from dragoman.models.prepare import gguf_path
    from dragoman.service.settings import ServeSettings

    serve = ServeSettings(model=settings.model, data_dir=settings.data_dir)
    if resolve_architecture(serve)[1].value != "llama-cpp":
        return
    form = gguf_form(serve)
    path = gguf_path(settings.model, settings.data_dir, form=form)
    console.print(f"[green]ready[/] {settings.model} for llama.cpp ({form} GGUF) at {path}")


def run_list(settings: ModelSettings) -> None:
    table = Table("name", "prepared", "description")
    for name, entry in CATALOGUE.items():
        ok = is_prepared(model_dir(settings.data_dir, name), entry.sha256)
        table.add_row(name, "yes" if ok else "no", entry.description)
    Console().print(table)
