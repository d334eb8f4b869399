"""The jobs service (fake engine, a folder store): refusals at upload before any job exists,
a job's life to its result, delete and shutdown stopping the engine work, a restart reporting
what it left unfinished, expiry, and who may read a job."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from dragoman.errors import (
    BadFile,
    Draining,
    FileTooLarge,
    JobNotFound,
    JobNotReady,
    UnsupportedFormat,
    UnsupportedLanguage,
)
from dragoman.jobs import service as jobs_service
from dragoman.jobs.record import RESTARTED, Instance
from dragoman.jobs.runner import Ask
from dragoman.jobs.service import SHUT_DOWN, Jobs
from dragoman.jobs.store import DirStore
from dragoman.service.keys import Caller
from tests.fakes import FakeTranslator
from tests.unit.jobs.conftest import make_service, until
from tests.unit.jobs.test_store import record

ASK = Ask("en", "fr")
ANYONE = Caller()
DOC = b"plain: First sentence.\nxml: A <g1>bold</g1> claim.\nplain: Last one."


async def test_a_job_runs_to_its_result(jobs: Jobs) -> None:
    made, key = await jobs.submit("notes.seg", DOC, ASK, ANYONE)
    assert made.segments_total == 3 and made.format == "seg"
    done = await jobs.finished(made.id)
    assert done is not None and done.status == "done", done
    got, data = await jobs.result(made.id, key, ANYONE)
    assert data == b"[fr] First sentence.\n[fr] A <g1>bold</g1> claim.\n[fr] Last one."
    assert got.segments_done == 3 and got.billed_characters == made.characters
    assert got.result_bytes == len(data) and got.error is None


@pytest.mark.parametrize(
    ("name", "data", "ask", "error"),
    [
        ("report.pdf", b"%PDF-1.7", ASK, UnsupportedFormat),
        ("notes.txt", b"\xff\xfe\x00bad", ASK, BadFile),
        ("notes.txt", b"", ASK, BadFile),
        ("notes.seg", b"not segments", ASK, BadFile),
        ("notes.txt", b"Hello.", Ask("en", "en"), UnsupportedLanguage),
        ("notes.txt", b"Hello.", Ask("en", "ko"), UnsupportedLanguage),
        ("notes.txt", b"Hello.", Ask(None, "xx"), UnsupportedLanguage),
        ("notes.txt", b"x" * 2048, ASK, FileTooLarge),
    ],
)
async def test_what_cannot_be_translated_is_refused_before_a_job_exists(
    fake: FakeTranslator,
    store: DirStore,
    name: str,
    data: bytes,
    ask: Ask,
    error: type[Exception],
) -> None:
    async with Jobs(make_service(fake, max_file_bytes=1024), lambda: fake, store) as jobs:
        with pytest.raises(error):
            await jobs.submit(name, data, ask, ANYONE)
        assert await store.records() == []
    assert fake.started == 0


async def test_a_marked_up_segment_too_long_to_send_is_refused_at_upload(jobs: Jobs) -> None:
    with pytest.raises(BadFile, match="segment 0 is 250 characters of marked-up text"):
        await jobs.submit("a.seg", b"xml: " + b"y" * 250, ASK, ANYONE)


async def test_progress_is_stored_and_the_result_waits_for_the_end(
    fake: FakeTranslator, jobs: Jobs
) -> None:
    fake.gate = asyncio.Event()
    made, key = await jobs.submit("notes.seg", DOC, ASK, ANYONE)
    await until(lambda: fake.running == 3)
    now = await jobs.get(made.id, key, ANYONE)
    assert now.status == "translating" and now.segments_done == 0
    with pytest.raises(JobNotReady, match="translating, 0 of 3 segments"):
        await jobs.result(made.id, key, ANYONE)
    fake.gate.set()
    await jobs.finished(made.id)
    stored = await jobs.store.load(made.id)
    assert stored is not None and (stored.status, stored.segments_done) == ("done", 3)


async def test_delete_aborts_the_engine_work_and_removes_the_job(
    fake: FakeTranslator, jobs: Jobs
) -> None:
    fake.gate = asyncio.Event()
    made, key = await jobs.submit("notes.seg", DOC, ASK, ANYONE)
    await until(lambda: fake.running == 3)
    await jobs.delete(made.id, key, ANYONE)
    assert fake.cancelled == 3 and fake.running == 0
    assert await jobs.store.records() == []
    with pytest.raises(JobNotFound):
        await jobs.get(made.id, key, ANYONE)


async def test_a_job_deleted_through_another_server_stops_here(
    fake: FakeTranslator, jobs: Jobs, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(jobs_service, "SAVE_EVERY", 0.0)
    fake.gate = asyncio.Event()
    made, _ = await jobs.submit(
        "a.seg", b"plain: One.\nxml: <g1>Two</g1>.\nhtml: <b>Three</b>.", ASK, ANYONE
    )
    await until(lambda: fake.running == 3)
    await jobs.store.delete(made.id)  # as another server sharing the folder does
    fake.gate.set()  # the first call to finish finds it gone at its save
    await jobs.finished(made.id)
    assert await jobs.store.records() == []


async def test_an_engine_failure_is_the_jobs_error(fake: FakeTranslator, jobs: Jobs) -> None:
    fake.max_words = 2
    made, key = await jobs.submit("notes.seg", DOC, ASK, ANYONE)
    done = await jobs.finished(made.id)
    assert done is not None and done.status == "error"
    assert done.error == "text is too long for the fake model"
    with pytest.raises(JobNotReady, match="was not translated: text is too long"):
        await jobs.result(made.id, key, ANYONE)


async def test_a_shutdown_stores_a_running_job_as_an_error(
    fake: FakeTranslator, store: DirStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(jobs_service, "SHUTDOWN_GRACE", 0.05)
    fake.gate = asyncio.Event()
    async with Jobs(make_service(fake), lambda: fake, store) as jobs:
        made, _ = await jobs.submit("notes.seg", DOC, ASK, ANYONE)
        await until(lambda: fake.running == 3)
    assert fake.cancelled == 3
    stored = await store.load(made.id)
    assert stored is not None and (stored.status, stored.error) == ("error", SHUT_DOWN)


async def test_a_draining_server_takes_no_document_and_fails_one_not_yet_admitted(
    fake: FakeTranslator, store: DirStore
) -> None:
    """Admitted calls finish within the drain; a call still waiting for room is refused,
    and its job stored as an error, not left queued forever."""
    async with Jobs(make_service(fake, admitted=4), lambda: fake, store) as jobs:
        fake.gate = asyncio.Event()
        eight = b"\n".join(b"plain: Text %d." % i for i in range(8))
        made, _ = await jobs.submit("a.seg", eight, ASK, ANYONE)
        await until(lambda: fake.running == 4)  # one call admitted, the other refused for now
        jobs._service.admission.drain()
        with pytest.raises(Draining):
            await jobs.submit("notes.seg", DOC, ASK, ANYONE)
        fake.gate.set()
        done = await jobs.finished(made.id)
        assert done is not None and done.status == "error"
        assert done.error is not None and "shutting down" in done.error
        assert fake.started == 4  # the admitted call's texts finished; no other began
        assert len(await store.records()) == 1


async def test_a_restart_reports_what_the_last_life_left_unfinished(
    fake: FakeTranslator, store: DirStore
) -> None:
    me = Instance.here()
    dead = Instance(me.host, 2**22 + 12345, "old")  # no such process
    earlier_life = Instance(me.host, me.pid, "before")  # a restarted container: pid 1 again
    elsewhere = Instance("another-host", 1, "there")
    left = {
        "dead": record(server=str(dead), status="translating"),
        "earlier": record(server=str(earlier_life), status="queued"),
        "stale": record(server=str(elsewhere), status="translating", beat=time.time() - 600),
        "alive": record(server=str(elsewhere), status="translating"),
        "done": record(server=str(dead), status="done", finished=time.time(), result_bytes=1),
    }
    for r in left.values():
        await store.add(r, b"x")
    async with Jobs(make_service(fake), lambda: fake, store, me):
        stored = {name: await store.load(r.id) for name, r in left.items()}
    for name in ("dead", "earlier", "stale"):
        s = stored[name]
        assert s is not None and (s.status, s.error) == ("error", RESTARTED), name
    assert stored["alive"] is not None and stored["alive"].status == "translating"
    assert stored["done"] is not None and stored["done"].status == "done"


async def test_finished_jobs_expire_and_running_ones_never(
    fake: FakeTranslator, tmp_path: Path
) -> None:
    store = DirStore(tmp_path, max_jobs=10, max_bytes=2**20, ttl=60)
    async with Jobs(make_service(fake, documents_ttl=60), lambda: fake, store) as jobs:
        old = record(status="done", finished=time.time() - 61, result_bytes=1)
        fresh = record(status="error", finished=time.time() - 30, error="x")
        running = record(status="translating", started=time.time() - 3600)
        for r in (old, fresh, running):
            await store.add(r, b"x")
        await jobs.sweep()
        assert {r.id for r in await store.records()} == {fresh.id, running.id}
        # one read between two sweeps: expired is expired
        fresh.finished = time.time() - 61
        await store.save(fresh)
        with pytest.raises(JobNotFound):
            await jobs.get(fresh.id, None, Caller("owner"))


async def test_a_job_is_read_with_its_key_or_the_api_key_that_sent_it(jobs: Jobs) -> None:
    owner, other = Caller("a" * 64, "alice"), Caller("b" * 64, "bob")
    made, key = await jobs.submit("notes.seg", DOC, ASK, owner)
    assert (await jobs.get(made.id, key, other)).id == made.id  # the key is enough
    assert (await jobs.get(made.id, None, owner)).id == made.id  # so is the sender's API key
    for key_given, caller in ((None, other), (None, ANYONE), ("x" * 43, other)):
        with pytest.raises(JobNotFound):
            await jobs.get(made.id, key_given, caller)
        with pytest.raises(JobNotFound):
            await jobs.delete(made.id, key_given, caller)
    await jobs.finished(made.id)
    assert (await jobs.result(made.id, None, owner))[1].startswith(b"[fr]")


async def test_a_file_that_records_its_language_says_the_target(jobs: Jobs) -> None:
    catalogue = (
        b'msgid ""\nmsgstr ""\n"Language: en\\n"\n"Content-Type: text/plain; charset=UTF-8\\n"\n\n'
        b'msgid "Save the file"\nmsgstr ""\n'
    )
    made, key = await jobs.submit("app.po", catalogue, ASK, ANYONE)
    await jobs.finished(made.id)
    _, data = await jobs.result(made.id, key, ANYONE)
    assert b'"Language: fr\\n"' in data and b'msgstr "[fr] Save the file"' in data
