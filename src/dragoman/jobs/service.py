"""Document jobs: a file uploaded, translated in the background, its status polled, its result
fetched. Every surface's document API (DeepL's, LibreTranslate's, the native one) is a thin
layer over this.

`submit` reads the file off the event loop and refuses what cannot be translated (a format no
reader handles, a corrupt file, a language not served) before any job exists, so the client
gets its 4xx at upload; then it stores the upload and starts a task that translates every
segment (`runner`), renders the result off the loop and stores it. A job is queued,
translating, done or error (with its message); its progress is the segments done.

Nothing admitted is lost silently: a job cancelled by a shutdown is stored as an error; one
whose server stopped without a word (killed, restarted) is found by its stale heartbeat, or at
once when that server ran on this host and is gone, and reported as an error. Finished jobs
are removed `documents_ttl` seconds after they end."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from dragoman import files
from dragoman.engine.protocol import Translator
from dragoman.errors import BadFile, DragomanError, JobFailed, JobNotFound, JobNotReady
from dragoman.files.base import Parsed, render
from dragoman.jobs.record import (
    RESTARTED,
    Instance,
    JobRecord,
    digest,
    new_id,
    new_key,
    orphaned,
)
from dragoman.jobs.runner import Ask, translate_segments
from dragoman.jobs.store import JobStore
from dragoman.languages import check_code, check_pair
from dragoman.service.keys import Caller
from dragoman.service.translation import TranslationService

log = logging.getLogger(__name__)

HEARTBEAT = 10.0
"""Seconds between a server's word that its jobs are still at work."""
STALE = 6 * HEARTBEAT
"""A job whose server has not said so for this long is reported as an error."""
SWEEP = 60.0
"""Seconds between looks at every job kept (expired ones removed, orphans reported)."""
SAVE_EVERY = 0.5
"""Seconds between writes of a job's progress (its last is always written)."""
SHUTDOWN_GRACE = 5.0
"""Seconds jobs still running when the server stops get to finish (rendering, storing)."""
SHUT_DOWN = "the server shut down before this document was translated; submit it again"


@dataclass
class _Running:
    record: JobRecord
    task: asyncio.Task[None] | None = None
    finished: asyncio.Event = field(default_factory=asyncio.Event)
    deleted: bool = False
    saved: float = 0.0
    error: DragomanError | None = None
    """Why it failed, as raised (`outcome` raises it again)."""


class Jobs:
    def __init__(
        self,
        service: TranslationService,
        translator: Callable[[], Translator],
        store: JobStore,
        instance: Instance | None = None,
    ) -> None:
        self._service = service
        self._translator = translator  # EngineNotReady while the model loads
        self.store = store
        self.settings = service.settings
        self.limits = files.Limits(max_bytes=self.settings.max_file_bytes)
        self._me = instance or Instance.here()
        self._running: dict[str, _Running] = {}
        self._sweeper: asyncio.Task[None] | None = None

    async def __aenter__(self) -> Jobs:
        await self.sweep()  # a restart: what the last life left unfinished is reported now
        self._sweeper = asyncio.create_task(self._sweep_loop(), name="document-jobs")
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._sweeper is not None:
            self._sweeper.cancel()
            await asyncio.gather(self._sweeper, return_exceptions=True)
        tasks = [r.task for r in self._running.values() if r.task is not None]
        if tasks:
            # Drained (api/serve.py): their calls finished or were refused; what is left
            # gets a moment to render and store its result, then is stopped as an error.
            await asyncio.wait(tasks, timeout=SHUTDOWN_GRACE)
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
        await self.store.aclose()

    # -- submitting ----------------------------------------------------------------------

    async def submit(
        self, filename: str, data: bytes, ask: Ask, caller: Caller
    ) -> tuple[JobRecord, str]:
        """A new job for the file, and its key (shown once: only its digest is kept)."""
        self._service.admission.check_open()  # a draining server takes no new document
        served = self._translator().languages
        if ask.source is None:
            check_code("target_lang", ask.target, served)
        else:
            check_pair(ask.source, ask.target, served)
        fmt, parsed = await asyncio.to_thread(files.read, filename, data, self.limits)
        segments = parsed.segments
        longest = self.settings.max_text_chars
        for i, s in enumerate(segments):
            if s.markup is not None and len(s.text) > longest:
                raise BadFile(
                    f"{filename!r}: segment {i} is {len(s.text)} characters of marked-up text; "
                    f"the limit is {longest}"
                )
        key = new_key()
        record = JobRecord(
            id=new_id(),
            key_digest=digest(key),
            owner=caller.key,
            filename=filename,
            format=fmt.name,
            media_type=fmt.media_type,
            source=ask.source,
            target=ask.target,
            segments_total=len(segments),
            characters=sum(len(s.text) for s in segments),
            server=str(self._me),
            upload_bytes=len(data),
        )
        await self.store.add(record, data)
        run = _Running(record)
        self._running[record.id] = run
        run.task = asyncio.create_task(self._run(run, parsed, ask, caller), name="document")
        log.info(
            "document %s: %s, %d segments, %d characters",
            record.id[:6],
            fmt.name,
            record.segments_total,
            record.characters,
        )
        return record, key

    async def _run(self, run: _Running, parsed: Parsed, ask: Ask, caller: Caller) -> None:
        record = run.record
        try:
            result = await self._translate(run, parsed, ask, caller)
            if record.error is not None:
                log.info("document %s failed: %s", record.id[:6], record.error)
            await self.store.finish(record, result)
        except asyncio.CancelledError:
            if not run.deleted:
                record.failed(SHUT_DOWN)
                log.warning("document %s stopped by the shutdown", record.id[:6])
                with contextlib.suppress(Exception):
                    await self.store.finish(record, None)
            raise
        except DragomanError as exc:  # the store failed
            log.error("document %s: its result could not be stored: %s", record.id[:6], exc)
        finally:
            self._running.pop(record.id, None)
            run.finished.set()

    async def _translate(
        self, run: _Running, parsed: Parsed, ask: Ask, caller: Caller
    ) -> bytes | None:
        """The translated file; None, with the record saying why, when it failed."""
        record = run.record
        record.status, record.started = "translating", time.time()
        await self._save(run, force=True)

        async def progress(done: int, billed: int) -> None:
            record.segments_done, record.billed_characters = done, billed
            await self._save(run)

        try:
            texts, billed = await translate_segments(
                self._service, parsed.segments, ask, caller, progress
            )
            # the target's code too, where the file records its language (a .po header)
            result = await asyncio.to_thread(render, parsed, texts, ask.target)
        except DragomanError as exc:
            record.failed(exc.message)
            run.error = exc
            return None
        except Exception:
            log.exception("document %s failed", record.id[:6])
            record.failed("internal error while translating the document")
            return None
        record.segments_done, record.billed_characters = record.segments_total, billed
        record.status, record.finished = "done", time.time()
        record.result_bytes = len(result)
        return result

    async def _save(self, run: _Running, force: bool = False) -> None:
        now = time.monotonic()
        if not force and now - run.saved < SAVE_EVERY:
            return
        run.saved = now
        run.record.beat = time.time()
        if not await self.store.save(run.record):  # deleted, perhaps through another server
            self._stop(run)

    def _stop(self, run: _Running) -> None:
        run.deleted = True
        if run.task is not None and run.task is not asyncio.current_task():
            run.task.cancel()
        elif run.task is not None:
            raise asyncio.CancelledError

    # -- reading ---------------------------------------------------------------------------

    async def get(self, job_id: str, key: str | None, caller: Caller) -> JobRecord:
        """The job, for its key or the API key that sent it; JobNotFound otherwise (as for
        none: a job's existence is no one else's to learn)."""
        run = self._running.get(job_id)
        record = run.record if run is not None else await self.store.load(job_id)
        if record is None or not record.readable_by(key, caller):
            raise JobNotFound("no document by that id (it may have expired)")
        end = record.expires(self.settings.documents_ttl)
        if end is not None and end <= time.time():
            await self.store.delete(job_id)
            raise JobNotFound("no document by that id (it may have expired)")
        if run is None and orphaned(record, self._me, STALE):
            await self._orphan(record)
        return record

    async def result(self, job_id: str, key: str | None, caller: Caller) -> tuple[JobRecord, bytes]:
        record = await self.get(job_id, key, caller)
        if record.status == "error":
            raise JobNotReady(f"the document was not translated: {record.error}")
        if record.status != "done":
            raise JobNotReady(
                f"the document is not translated yet ({record.status}, "
                f"{record.segments_done} of {record.segments_total} segments)"
            )
        data = await self.store.result(job_id)
        if data is None:
            raise JobNotFound("no document by that id (it may have expired)")
        return record, data

    async def finished(self, job_id: str) -> JobRecord | None:
        """The job once it is finished (a job of this server's; another's as it is now)."""
        run = self._running.get(job_id)
        if run is None:
            return await self.store.load(job_id)
        await run.finished.wait()
        return run.record

    async def outcome(self, job_id: str) -> JobRecord:
        """The job once it is done; if it failed, its error raised (as it was raised, where
        it ran on this server; else JobFailed with its message)."""
        run = self._running.get(job_id)
        record = await self.finished(job_id)
        if record is None:
            raise JobNotFound("no document by that id (it may have expired)")
        if record.status == "error":
            if run is not None and run.error is not None:
                raise run.error
            raise JobFailed(f"the document was not translated: {record.error}")
        return record

    async def delete(self, job_id: str, key: str | None, caller: Caller) -> None:
        """Stop the job where it runs here (its engine requests aborted) and remove it. On
        another server, its next word finds it gone and it stops there."""
        await self.get(job_id, key, caller)
        run = self._running.get(job_id)
        if run is not None and run.task is not None:
            run.deleted = True
            run.task.cancel()
            await asyncio.gather(run.task, return_exceptions=True)
        await self.store.delete(job_id)

    # -- upkeep ----------------------------------------------------------------------------

    async def _orphan(self, record: JobRecord) -> None:
        log.warning("document %s: its server is gone; reported as failed", record.id[:6])
        record.failed(RESTARTED)
        await self.store.save(record)

    async def sweep(self) -> None:
        """Remove expired jobs and report those no server translates any more."""
        now = time.time()
        for record in await self.store.records():
            end = record.expires(self.settings.documents_ttl)
            if end is not None and end <= now:
                await self.store.delete(record.id)
            elif record.id not in self._running and orphaned(record, self._me, STALE, now):
                await self._orphan(record)

    async def _sweep_loop(self) -> None:
        last_sweep = time.monotonic()
        while True:
            await asyncio.sleep(HEARTBEAT)
            for run in list(self._running.values()):
                with contextlib.suppress(DragomanError):
                    await self._save(run, force=True)
            if time.monotonic() - last_sweep >= min(SWEEP, self.settings.documents_ttl):
                last_sweep = time.monotonic()
                try:
                    await self.sweep()
                except DragomanError as exc:
                    log.warning("document sweep: %s", exc)
