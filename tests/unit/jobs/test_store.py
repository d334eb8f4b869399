"""The folder store of document jobs: a job's files written whole and read back, its bounds
(jobs and bytes) refusing with a Retry-After, nothing outside its folder, leftovers swept."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from dragoman.errors import JobStoreFull
from dragoman.jobs.record import Instance, JobRecord, digest, new_id, new_key, split_handle
from dragoman.jobs.store import DirStore, default_dir


def record(upload: int = 10, **kw: object) -> JobRecord:
    base: dict[str, object] = {
        "id": new_id(),
        "key_digest": digest("k" * 43),
        "owner": None,
        "filename": "a.txt",
        "format": "txt",
        "media_type": "text/plain",
        "source": "en",
        "target": "fr",
        "segments_total": 1,
        "characters": upload,
        "server": str(Instance.here()),
        "upload_bytes": upload,
    }
    return JobRecord(**{**base, **kw})  # type: ignore[arg-type]


async def test_a_job_is_kept_finished_and_removed(store: DirStore, tmp_path: Path) -> None:
    r = record()
    await store.add(r, b"0123456789")
    assert (tmp_path / "documents" / f"{r.id}.in").read_bytes() == b"0123456789"
    r.status, r.segments_done = "translating", 1
    assert await store.save(r)
    assert (await store.load(r.id)) == r
    r.status, r.finished, r.result_bytes = "done", time.time(), 3
    assert await store.finish(r, b"abc")
    assert await store.result(r.id) == b"abc"
    assert not (tmp_path / "documents" / f"{r.id}.in").exists()  # the upload, once done
    loaded = await store.load(r.id)
    assert loaded is not None and loaded.status == "done"
    await store.delete(r.id)
    assert await store.load(r.id) is None
    assert await store.result(r.id) is None
    assert not await store.save(r)  # gone: a save does not bring it back
    assert await store.load(r.id) is None
    assert list((tmp_path / "documents").glob("*.json")) == []


async def test_the_count_bound_refuses_with_a_retry_after_from_the_first_expiry(
    tmp_path: Path,
) -> None:
    store = DirStore(tmp_path, max_jobs=2, max_bytes=2**30, ttl=100)
    done = record(status="done", finished=time.time() - 40, result_bytes=1)
    await store.add(done, b"x")
    await store.finish(done, b"y")
    await store.add(record(), b"x")
    with pytest.raises(JobStoreFull, match="holds 2 documents") as caught:
        await store.add(record(), b"x")
    assert caught.value.retry_after is not None and 55 <= caught.value.retry_after <= 61
    assert caught.value.status_code == 503


async def test_the_byte_bound_counts_a_running_job_twice_and_a_finished_one_by_its_result(
    tmp_path: Path,
) -> None:
    store = DirStore(tmp_path, max_jobs=100, max_bytes=100, ttl=100)
    running = record(upload=30)
    await store.add(running, b"x" * 30)  # counts 60
    with pytest.raises(JobStoreFull, match="60 of its 100 bytes are used"):
        await store.add(record(upload=30), b"x" * 30)  # 60 + 60 > 100
    running.status, running.finished, running.result_bytes = "done", time.time(), 10
    await store.finish(running, b"y" * 10)  # now counts 10
    await store.add(record(upload=30), b"x" * 30)  # 10 + 60 fits


async def test_ids_that_could_name_another_file_are_none(store: DirStore) -> None:
    for bad in ("../etc/passwd", "a", "/" * 22, "x" * 21 + "/"):
        assert await store.load(bad) is None
        assert await store.result(bad) is None
        await store.delete(bad)  # nothing to do, nothing raised


def test_a_handle_is_an_id_and_its_key() -> None:
    job_id, key = new_id(), new_key()
    assert split_handle(job_id + key) == (job_id, key)
    assert split_handle(job_id) == (job_id, None)
    from dragoman.errors import JobNotFound

    for bad in ("short", job_id + "!bad", "../" + job_id, job_id + "k"):
        with pytest.raises(JobNotFound):
            split_handle(bad)


async def test_files_of_no_job_are_swept_once_old(store: DirStore, tmp_path: Path) -> None:
    folder = tmp_path / "documents"
    kept = record()
    await store.add(kept, b"kept")
    old, new = folder / f"{new_id()}.out", folder / f"{new_id()}.in"
    old.write_bytes(b"left by a delete cut short")
    new.write_bytes(b"an upload whose status is being written")
    past = time.time() - 3600
    os.utime(old, (past, past))
    assert [r.id for r in await store.records()] == [kept.id]
    assert not old.exists() and new.exists()
    assert (folder / f"{kept.id}.in").exists()


async def test_a_torn_status_file_is_no_job(store: DirStore, tmp_path: Path) -> None:
    r = record()
    await store.add(r, b"x")
    (tmp_path / "documents" / f"{r.id}.json").write_text('{"id": "')
    assert await store.load(r.id) is None
    assert await store.records() == []


def test_the_default_folder_falls_back_to_a_temporary_one_when_unwritable(
    tmp_path: Path,
) -> None:
    assert default_dir(tmp_path) == tmp_path / "documents"
    blocked = tmp_path / "blocked"
    blocked.write_text("a file where the data folder should be")
    fallback = default_dir(blocked)
    assert fallback != blocked / "documents" and fallback.is_dir()
    fallback.rmdir()
