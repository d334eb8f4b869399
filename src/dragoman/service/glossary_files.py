"""Stored glossaries as files: one JSON file per glossary in a directory (--glossary-dir), which
several servers may share (one machine's directory, or a shared volume)."""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import logging
import os
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from dragoman.engine.protocol import Terms
from dragoman.service.glossary import (
    MAX_GLOSSARIES,
    Glossary,
    GlossaryStoreFailed,
    Summary,
    from_json,
    is_id,
    made,
    not_found,
    oldest_first,
    to_json,
    too_many,
)

log = logging.getLogger(__name__)


class GlossaryStore:
    """Glossaries by id, each a JSON file in `directory` (None: in memory only). Files are
    written whole (a reader sees none or all of one) under a lock beside them, so several
    servers may share the directory; each reads a glossary once and afterwards only checks
    that its file is still there (another server may have deleted it)."""

    def __init__(self, directory: Path | None = None) -> None:
        self._dir = directory
        self._loaded: dict[str, Glossary] = {}
        self._unreadable: set[str] = set()  # files already reported
        try:
            self.store_id = self._identity()
            """Names the directory (servers sharing one report the same: `dragoman route`
            passes glossary requests only to a fleet that shares its glossaries); None in
            memory."""
        except OSError as exc:
            # A read-only data directory (weights prepared on a read-only volume) must not
            # stop a server that may never store a glossary: they are kept in memory instead.
            log.warning(
                "glossary directory %s cannot be used (%s): stored glossaries are kept in "
                "memory, lost at a restart (set --glossary-dir)",
                directory,
                exc.strerror or exc,
            )
            self._dir, self.store_id = None, None

    def create(
        self, name: str, source: str, target: str, entries: Terms, owner: str | None = None
    ) -> Glossary:
        g = made(name, source, target, entries, owner)
        with self._editing():
            if sum(g.owner == owner for g in self._all()) >= MAX_GLOSSARIES:
                raise too_many()
            self._write(g)
            self._loaded[g.glossary_id] = g
        return g

    def owned(self, owner: str | None) -> list[Summary]:
        """`owner`'s glossaries, oldest first."""
        return oldest_first(g.summary() for g in self._all() if g.owner == owner)

    def get(self, glossary_id: str, owner: str | None = None) -> Glossary:
        """The glossary, if `owner` made it: another key's is not found, as one never made."""
        g = self._find(glossary_id)
        if g is None or g.owner != owner:
            raise not_found(glossary_id)
        return g

    def delete(self, glossary_id: str, owner: str | None = None) -> None:
        self.get(glossary_id, owner)
        with self._editing():
            if self._dir is not None:
                try:
                    self._path(glossary_id).unlink(missing_ok=True)
                except OSError as exc:
                    raise self._failed(exc) from None
            self._loaded.pop(glossary_id, None)

    # -- the directory -------------------------------------------------------------------

    def _identity(self) -> str | None:
        """The directory's id: made by the first server to use it, read by the others (a
        copy of the directory keeps it: delete `.store-id` in a copy that is not shared)."""
        if self._dir is None:
            return None
        self._dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        path = self._dir / ".store-id"
        with self._lock():
            if not path.exists():
                path.write_text(str(uuid.uuid4()), encoding="ascii")
            return path.read_text(encoding="ascii", errors="replace").strip()

    def _path(self, glossary_id: str) -> Path:
        assert self._dir is not None
        return self._dir / f"{glossary_id}.json"

    def _find(self, glossary_id: str) -> Glossary | None:
        if not is_id(glossary_id):  # also what keeps a path out of the directory
            return None
        if self._dir is None:
            return self._loaded.get(glossary_id)
        path = self._path(glossary_id)
        if not path.exists():  # deleted, here or by another server
            self._loaded.pop(glossary_id, None)
            return None
        g = self._loaded.get(glossary_id)
        if g is None:
            g = self._read(path)
            if g is not None:
                self._loaded[glossary_id] = g
        return g

    def _all(self) -> list[Glossary]:
        if self._dir is None:
            return list(self._loaded.values())
        present = {p.stem for p in self._dir.glob("*.json")}
        for gone in self._loaded.keys() - present:  # deleted by another server
            del self._loaded[gone]
        self._unreadable &= {f"{stem}.json" for stem in present}
        found = [self._find(stem) for stem in present]
        return [g for g in found if g is not None]

    def _read(self, path: Path) -> Glossary | None:
        try:
            return from_json(path.read_text(encoding="utf-8"), path.stem)
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as exc:  # ValueError: edited by hand
            if path.name not in self._unreadable:  # once, not at every request
                self._unreadable.add(path.name)
                log.warning("glossary file %s is unreadable, left out: %s", path, exc)
            return None

    def _write(self, g: Glossary) -> None:
        if self._dir is None:
            return
        tmp = None
        try:
            fd, tmp = tempfile.mkstemp(prefix=".new-", dir=self._dir)
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(to_json(g))
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, self._path(g.glossary_id))
        except OSError as exc:
            if tmp is not None:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
            raise self._failed(exc) from None

    def _failed(self, exc: OSError) -> GlossaryStoreFailed:
        log.error("glossary directory %s: %s", self._dir, exc)
        return GlossaryStoreFailed(f"glossaries cannot be stored right now ({exc.strerror})")

    @contextlib.contextmanager
    def _editing(self) -> Iterator[None]:
        """One writer at a time across the servers sharing the directory (the count per key
        is checked and the file written under the lock)."""
        if self._dir is None:
            yield
            return
        try:
            lock = self._lock()
        except OSError as exc:
            raise self._failed(exc) from None
        with lock:
            yield

    def _lock(self) -> IO[str]:
        """The lock beside the glossaries, held until the file returned is closed."""
        assert self._dir is not None
        lock = open(self._dir / ".lock", "a")  # noqa: SIM115 (the caller closes it)
        try:
            fcntl.flock(lock, fcntl.LOCK_EX)
        except BaseException:
            lock.close()
            raise
        return lock


class FileGlossaries:
    """The store's calls run off the event loop: a lock another server holds, or an fsync,
    would otherwise hold every request."""

    def __init__(self, directory: Path | None = None) -> None:
        self.files = GlossaryStore(directory)

    async def identity(self) -> str | None:
        return self.files.store_id

    async def create(
        self, name: str, source: str, target: str, entries: Terms, owner: str | None
    ) -> Glossary:
        return await asyncio.to_thread(self.files.create, name, source, target, entries, owner)

    async def owned(self, owner: str | None) -> list[Summary]:
        return await asyncio.to_thread(self.files.owned, owner)

    async def get(self, glossary_id: str, owner: str | None) -> Glossary:
        return await asyncio.to_thread(self.files.get, glossary_id, owner)

    async def delete(self, glossary_id: str, owner: str | None) -> None:
        await asyncio.to_thread(self.files.delete, glossary_id, owner)

    async def __aenter__(self) -> FileGlossaries:
        return self

    async def __aexit__(self, *exc: object) -> None:
        return None
