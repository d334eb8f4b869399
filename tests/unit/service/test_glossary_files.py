"""Stored glossaries as files: they outlive the store, are shared through the directory (the
bound per key too), and a directory or file gone wrong is a clear error or left out."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from dragoman.errors import InvalidRequest
from dragoman.service.glossary import MAX_GLOSSARIES, GlossaryNotFound, GlossaryStoreFailed
from dragoman.service.glossary_files import GlossaryStore


def test_store() -> None:
    store = GlossaryStore()
    g = store.create("ui", "en", "fr", (("Save", "Enregistrer"),))
    assert store.get(g.glossary_id) is g and g.creation_time.endswith("Z")
    store.delete(g.glossary_id)
    with pytest.raises(GlossaryNotFound):
        store.get(g.glossary_id)


ENTRIES = (("Save", "Enregistrer"),)


def test_stored_glossaries_outlive_the_store_and_are_shared_through_the_directory(
    tmp_path: Path,
) -> None:
    a = GlossaryStore(tmp_path / "g")
    g = a.create("ui", "en", "fr", ENTRIES, owner="k1")
    b = GlossaryStore(tmp_path / "g")  # another server on the directory, or a restart
    assert b.store_id == a.store_id is not None
    assert b.get(g.glossary_id, "k1") == g
    assert [x.glossary_id for x in b.owned("k1")] == [g.glossary_id]
    with pytest.raises(GlossaryNotFound):
        b.get(g.glossary_id, "k2")  # another key's: as never made
    b.delete(g.glossary_id, "k1")
    with pytest.raises(GlossaryNotFound):
        a.get(g.glossary_id, "k1")  # deleted by the other: gone here too
    assert a.owned("k1") == []
    assert GlossaryStore(tmp_path / "other").store_id != a.store_id


def test_the_bound_holds_across_the_servers_sharing_a_directory(tmp_path: Path) -> None:
    stores = [GlossaryStore(tmp_path) for _ in range(2)]
    for i in range(MAX_GLOSSARIES):
        stores[i % 2].create(f"g{i}", "en", "fr", ENTRIES)
    for store in stores:
        with pytest.raises(InvalidRequest, match="at most"):
            store.create("one more", "en", "fr", ENTRIES)


def test_an_unreadable_file_is_left_out_and_ids_never_leave_the_directory(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    store = GlossaryStore(tmp_path / "g")
    kept = store.create("ui", "en", "fr", ENTRIES)
    bad = "0" * 8 + "-0000-4000-8000-" + "0" * 12
    (tmp_path / "g" / f"{bad}.json").write_text("{not json")
    (tmp_path / "secret.json").write_text("{}")
    fresh = GlossaryStore(tmp_path / "g")
    assert [g.glossary_id for g in fresh.owned(None)] == [kept.glossary_id]
    assert "unreadable" in caplog.text
    for wrong in (bad, "../secret", "../g/" + kept.glossary_id, kept.glossary_id.upper()):
        with pytest.raises(GlossaryNotFound):
            fresh.get(wrong)


def test_a_directory_that_cannot_be_written_is_a_clear_error_not_a_crash(tmp_path: Path) -> None:
    store = GlossaryStore(tmp_path / "g")
    shutil.rmtree(tmp_path / "g")
    (tmp_path / "g").write_text("a file where the directory was")
    with pytest.raises(GlossaryStoreFailed) as exc:
        store.create("ui", "en", "fr", ENTRIES)
    assert exc.value.status_code == 503


def test_a_directory_that_cannot_be_made_keeps_glossaries_in_memory(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A read-only data directory must not stop a server that may never store one."""
    (tmp_path / "g").write_text("a file where the directory would be")
    store = GlossaryStore(tmp_path / "g" / "below")
    assert store.store_id is None and "kept in memory" in caplog.text
    g = store.create("ui", "en", "fr", ENTRIES)
    assert store.get(g.glossary_id) == g


def test_what_another_server_deleted_is_forgotten_here_too(tmp_path: Path) -> None:
    a, b = GlossaryStore(tmp_path), GlossaryStore(tmp_path)
    for _ in range(20):
        g = a.create("ui", "en", "fr", ENTRIES)
        assert b.owned(None) == [g.summary()]  # b reads it
        a.delete(g.glossary_id)
    assert b.owned(None) == []
    assert b._loaded == {}  # not kept for good, 5,000 terms each at most


def test_a_file_edited_by_hand_into_other_types_is_left_out(tmp_path: Path) -> None:
    store = GlossaryStore(tmp_path)
    g = store.create("ui", "en", "fr", ENTRIES)
    path = tmp_path / f"{g.glossary_id}.json"
    for change in ({"entries": [[1, "x"]]}, {"creation_time": 5}, {"owner": ["k"]}):
        raw = {**json.loads(path.read_text()), **change}
        path.write_text(json.dumps(raw))
        assert GlossaryStore(tmp_path).owned(None) == []
