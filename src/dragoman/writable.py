"""Where a command will write, checked before it starts work: a mistyped --out found only when
the results are written loses the whole run (eval's requests, a bench's levels)."""

from __future__ import annotations

import tempfile
from pathlib import Path

from dragoman.errors import ConfigError


def _nearest_existing(path: Path) -> Path:
    while not path.exists() and path.parent != path:
        path = path.parent
    return path


def check_dir(path: Path, flag: str) -> None:
    """ConfigError unless `path` is a folder, or can be made one, that a file can be written
    in. Leaves nothing behind: the folder itself is made when the results are written."""
    existing = path
    try:
        existing = _nearest_existing(path)
        if not existing.is_dir():
            raise ConfigError(f"{flag} {path}: {existing} is not a folder")
        probe = tempfile.TemporaryFile if existing == path else tempfile.TemporaryDirectory
        with probe(dir=existing):
            pass
    except OSError as exc:
        raise ConfigError(
            f"{flag} {path}: cannot write in {existing} ({exc.strerror or exc})"
        ) from None


def check_file(path: Path, flag: str) -> None:
    """ConfigError unless the file `path` can be written (made, or overwritten)."""
    if path.is_dir():
        raise ConfigError(f"{flag} {path}: is a folder, not a file")
    check_dir(path.parent, flag)
    if path.exists():
        try:
            with path.open("a"):  # opened for appending: nothing in it changes
                pass
        except OSError as exc:
            raise ConfigError(f"{flag} {path}: cannot write it ({exc.strerror or exc})") from None
