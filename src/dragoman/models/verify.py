"""`dragoman model prepare --verify` and `--force`. Start-up checks a prepared model's sizes
only (a stat a file: hashing gigabytes at every start is too slow), so a file overwritten with
other bytes of the same size passes it; `--verify` hashes every prepared file of a model again
against the digest recorded when it was made, and `--force` removes them all so that they are
made again."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, get_args

from dragoman.models.catalogue import CatalogueModel
from dragoman.models.gguf_forms import GgufForm, form_stem
from dragoman.models.prepare import (  # the layout prepare.py writes
    DIGESTS,
    READY_MARKER,
    _checked,
    _disk_errors,
    _locked,
    _sha256,
    _sized,
    model_dir,
)

# What is wrong, a line a file; what to run, with --model, is the one error line at the end (a
# bare `dragoman model prepare --force` is the default model's: for another, it remade that).
EXTRA = "not made by prepare (no digest recorded)"
UNFINISHED = f"no {READY_MARKER}: not prepared (an interrupted prepare --force left it)"
OLDER = "prepared by an older version (no digests recorded)"


@dataclass(frozen=True)
class Target:
    """A prepared file and the digest recorded for it (None: none recorded), or a whole
    prepared directory that cannot be checked (`problem`)."""

    path: Path
    digest: str | None = None
    problem: str = ""


@dataclass(frozen=True)
class Verdict:
    path: Path
    state: Literal["ok", "bad", "older"]  # older: no digest recorded to check against
    detail: str = ""


def _weights_dirs(entry: CatalogueModel, data_dir: Path) -> Iterator[tuple[str, Path]]:
    from dragoman.models.quantize import FORMS

    for weights in ("full", *FORMS):
        yield weights, model_dir(data_dir, entry.name, weights)


def _gguf_files(entry: CatalogueModel, data_dir: Path) -> list[Path]:
    """The shipped GGUF kept for llama.cpp and every re-encoded form of it, as named now or by
    an older recipe."""
    models = data_dir / "models"
    files = [models / entry.gguf_name]
    for form in get_args(GgufForm):
        if form != "shipped":
            files += sorted(models.glob(f"{form_stem(entry.gguf_name, form)}*.gguf"))
    return [f for f in files if f.is_file()]


def targets(entry: CatalogueModel, data_dir: Path) -> list[Target]:
    """What `--verify` hashes: each prepared weights directory's files, with the digests its
    marker's sibling recorded, and the GGUF files (the shipped one against the catalogue's
    checksum, a re-encoded form against the note written when it was made). A file or
    directory that cannot be read (its permissions) is a target with that problem, not a
    traceback."""
    found: list[Target] = []
    for _, path in _weights_dirs(entry, data_dir):
        try:
            found += _dir_targets(entry, path)
        except OSError as exc:
            found.append(Target(path, problem=f"unreadable: {exc.strerror or exc}"))
    try:
        ggufs = _gguf_files(entry, data_dir)
    except OSError as exc:
        return [*found, Target(data_dir / "models", problem=f"unreadable: {exc.strerror or exc}")]
    for gguf in ggufs:
        if gguf.name == entry.gguf_name:
            found.append(Target(gguf, entry.sha256))
            continue
        note = _checked(gguf)
        try:
            noted = note.read_text().strip() if note.is_file() else None
        except (OSError, ValueError) as exc:
            why = exc.strerror if isinstance(exc, OSError) else "not text"
            found.append(Target(gguf, problem=f"{note.name} is unreadable: {why or exc}"))
            continue
        found.append(Target(gguf, noted, "" if noted else OLDER))
    return found


def _dir_targets(entry: CatalogueModel, path: Path) -> list[Target]:
    """The files of the prepared directory `path` with their recorded digests; none when it
    is not there (a run making it works in a directory of its own)."""
    marker = path / READY_MARKER
    if not marker.is_file():
        # prepare renames a directory into place with its marker: one without is what an
        # interrupted --force (or an older layout's killed run) left, not a model
        return [Target(path, problem=UNFINISHED)] if path.is_dir() else []
    try:
        made_from = marker.read_text().splitlines()[0].strip()
    except (OSError, ValueError, IndexError):
        return [Target(path, problem=f"{READY_MARKER} is unreadable")]
    if made_from != entry.sha256:
        return [Target(path, problem="prepared from an older catalogue file")]
    if not (path / DIGESTS).is_file():
        return [Target(path, problem=OLDER)]
    try:
        lines = (path / DIGESTS).read_text().splitlines()
    except (OSError, ValueError):
        return [Target(path, problem=f"{DIGESTS} is unreadable")]
    found = []
    for line in lines:
        digest, _, name = line.partition("  ")
        found.append(Target(path / name, digest))
    # A file prepare did not make (a stray copy, `model (1).safetensors`) is not harmless:
    # vLLM loads every *.safetensors of a directory with no index.
    recorded = {target.path for target in found} | {path / READY_MARKER, path / DIGESTS}
    for extra in sorted(f for f in path.rglob("*") if f.is_file() and f not in recorded):
        found.append(Target(extra, problem=EXTRA))
    return found


def check(target: Target) -> Verdict:
    """`target` hashed again (in blocks: memory stays bounded whatever the file's size)."""
    if target.problem:
        return Verdict(target.path, "older" if target.problem == OLDER else "bad", target.problem)
    try:
        digest = _sha256(target.path)
    except FileNotFoundError:
        return Verdict(target.path, "bad", "missing")
    except OSError as exc:
        return Verdict(target.path, "bad", f"unreadable: {exc.strerror or exc}")
    if digest != target.digest:
        return Verdict(
            target.path,
            "bad",
            f"sha256 {digest[:16]}..., recorded {str(target.digest)[:16]}...",
        )
    return Verdict(target.path, "ok")


def remove_prepared(entry: CatalogueModel, data_dir: Path) -> list[Path]:
    """Every prepared file of `entry` under `data_dir` (each weights directory, the GGUF files
    and their notes), removed under the model's lock; what a host needs is made again by
    `model prepare`, and by `serve` as it starts. Returns what was removed."""
    models = data_dir / "models"
    if not models.is_dir():
        return []
    removed: list[Path] = []
    with (
        _disk_errors(f"cannot remove {entry.name} from {data_dir}"),
        _locked(models / f".{entry.name}.lock"),
    ):
        for _, path in _weights_dirs(entry, data_dir):
            if path.exists():
                (path / READY_MARKER).unlink(missing_ok=True)  # not ready, even half gone
                shutil.rmtree(path)
                removed.append(path)
        for gguf in _gguf_files(entry, data_dir):
            with _locked(models / f".{gguf.name}.lock"):
                gguf.unlink()  # first: a note left alone says nothing of a missing file
                for note in (_checked(gguf), _sized(gguf)):
                    note.unlink(missing_ok=True)
            removed.append(gguf)
    return removed
