"""Where document jobs are kept: the `JobStore` protocol, and its folder (--documents-dir):
`<id>.json` a job's status, `<id>.in` its upload while it runs, `<id>.out` its result. Files are
written whole (a reader sees none or all of one); the bounds are checked under a lock beside
them, so several servers may share the folder. Every call runs off the event loop.

The bounds: at most `max_jobs` jobs and `max_bytes` bytes. A job counts twice its upload until
it finishes (its result is about as large), then its result: an admitted job's result is always
written, so the store may pass `max_bytes` by what the estimates missed, never by more."""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import logging
import os
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Protocol

from dragoman.errors import JobStoreFull
from dragoman.jobs.record import JobRecord, is_id

log = logging.getLogger(__name__)

LEFTOVER_SECONDS = 300
"""Age past which a file of no job (a delete, or a write, cut short) is removed."""

RETRY_CAP = 60
"""Longest Retry-After a full store answers with (a client asks again before then anyway)."""


class JobStore(Protocol):
    where: str
    """Names the store in logs."""

    async def add(self, record: JobRecord, upload: bytes) -> None:
        """Keep a new job and its upload, or raise JobStoreFull past the bounds."""
        ...

    async def save(self, record: JobRecord) -> bool:
        """Write a job's status; False (and nothing written) when the job is gone: deleted,
        perhaps through another server."""
        ...

    async def finish(self, record: JobRecord, result: bytes | None) -> bool:
        """Write a finished job's status and result (None: it failed), dropping its upload;
        False when the job is gone."""
        ...

    async def load(self, job_id: str) -> JobRecord | None: ...

    async def result(self, job_id: str) -> bytes | None: ...

    async def delete(self, job_id: str) -> None: ...

    async def records(self) -> list[JobRecord]:
        """Every job kept (for the sweeps: expiry, and jobs whose server is gone)."""
        ...

    async def aclose(self) -> None: ...


def weight(record: JobRecord) -> int:
    """The bytes a job counts for against the store's bound (the module's doc says why)."""
    return record.result_bytes if record.final else 2 * record.upload_bytes


def check_room(kept: list[JobRecord], size: int, max_jobs: int, max_bytes: int, ttl: float) -> None:
    """JobStoreFull when a job of `size` upload bytes does not fit beside `kept`, with a
    Retry-After of when the first finished job expires."""
    used = sum(weight(r) for r in kept)
    if len(kept) < max_jobs and used + 2 * size <= max_bytes:
        return
    ends = [e for r in kept if (e := r.expires(ttl)) is not None]
    wait = min(ends) - time.time() if ends else RETRY_CAP
    why = (
        f"it holds {len(kept)} documents, its limit"
        if len(kept) >= max_jobs
        else f"{used} of its {max_bytes} bytes are used and this document needs {2 * size}"
    )
    raise JobStoreFull(
        f"the document store is full ({why}); retry once finished documents expire",
        max(1, min(RETRY_CAP, round(wait))),
    )


def default_dir(data_dir: Path) -> Path:
    """DATA_DIR/documents where it can be written, else a temporary folder of its own."""
    wanted = data_dir / "documents"
    try:
        wanted.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=wanted):
            pass
        return wanted
    except OSError as exc:
        fallback = Path(tempfile.mkdtemp(prefix="dragoman-documents-"))
        log.warning(
            "document folder %s cannot be used (%s): documents are kept in %s (set "
            "--documents-dir)",
            wanted,
            exc.strerror or exc,
            fallback,
        )
        return fallback


class DirStore:
    def __init__(self, directory: Path, max_jobs: int, max_bytes: int, ttl: float) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        self._dir = directory
        self.where = str(directory)
        self._max_jobs = max_jobs
        self._max_bytes = max_bytes
        self._ttl = ttl
        self._adding = asyncio.Lock()  # this process's uploads one at a time; the file lock too

    def _path(self, job_id: str, kind: str) -> Path:
        if not is_id(job_id):  # never a path outside the folder
            raise ValueError(f"not a document id: {job_id!r}")
        return self._dir / f"{job_id}.{kind}"

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        with open(self._dir / ".lock", "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            yield

    def _write(self, path: Path, data: bytes) -> None:
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=self._dir)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.replace(tmp, path)
        finally:
            Path(tmp).unlink(missing_ok=True)

    def _read_records(self) -> list[JobRecord]:
        out = []
        for path in self._dir.glob("*.json"):
            try:
                record = JobRecord.from_json(path.read_bytes())
            except OSError:  # deleted meanwhile
                continue
            if record is not None and path.stem == record.id:
                out.append(record)
        return out

    async def add(self, record: JobRecord, upload: bytes) -> None:
        def add() -> None:
            with self._locked():
                kept = self._read_records()
                check_room(kept, len(upload), self._max_jobs, self._max_bytes, self._ttl)
                self._write(self._path(record.id, "in"), upload)
                self._write(self._path(record.id, "json"), record.to_json())

        async with self._adding:
            await asyncio.to_thread(add)

    def _save(self, record: JobRecord) -> bool:
        path = self._path(record.id, "json")
        if not path.exists():
            return False
        self._write(path, record.to_json())
        return True

    async def save(self, record: JobRecord) -> bool:
        return await asyncio.to_thread(self._save, record)

    async def finish(self, record: JobRecord, result: bytes | None) -> bool:
        def finish() -> bool:
            if not self._path(record.id, "json").exists():
                return False
            if result is not None:
                self._write(self._path(record.id, "out"), result)
            self._path(record.id, "in").unlink(missing_ok=True)
            return self._save(record)

        return await asyncio.to_thread(finish)

    async def load(self, job_id: str) -> JobRecord | None:
        def load() -> JobRecord | None:
            try:
                return JobRecord.from_json(self._path(job_id, "json").read_bytes())
            except FileNotFoundError:
                return None

        return await asyncio.to_thread(load) if is_id(job_id) else None

    async def result(self, job_id: str) -> bytes | None:
        def result() -> bytes | None:
            try:
                return self._path(job_id, "out").read_bytes()
            except FileNotFoundError:
                return None

        return await asyncio.to_thread(result) if is_id(job_id) else None

    async def delete(self, job_id: str) -> None:
        def delete() -> None:
            # the status first: a job whose status is gone is gone (the sweep removes a file
            # a delete cut short left behind)
            for kind in ("json", "in", "out"):
                self._path(job_id, kind).unlink(missing_ok=True)

        if is_id(job_id):
            await asyncio.to_thread(delete)

    async def records(self) -> list[JobRecord]:
        def records() -> list[JobRecord]:
            found = self._read_records()
            # an upload or a result whose status is gone (a delete cut short), and not one
            # being added (its status is written right after it): removed
            known = {r.id for r in found}
            old = time.time() - LEFTOVER_SECONDS
            for pattern in ("*.in", "*.out", ".tmp-*"):
                for path in self._dir.glob(pattern):
                    with contextlib.suppress(OSError):
                        if path.stem not in known and path.stat().st_mtime < old:
                            path.unlink()
            return found

        return await asyncio.to_thread(records)

    async def aclose(self) -> None:
        return None
