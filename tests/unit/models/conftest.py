"""A tiny catalogue model whose chunks ship in packages made here."""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

import pytest

from dragoman.models.catalogue import CatalogueModel, Chunk


@pytest.fixture
def chunked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> CatalogueModel:
    """Three tiny importable packages, each holding one chunk of a 'model'."""
    blob = bytes(range(256)) * 100
    parts = [blob[:9000], blob[9000:20000], blob[20000:]]
    site = tmp_path / "site"
    for n, part in enumerate(parts, 1):
        pkg = site / f"fakepart{n}"
        (pkg / "data").mkdir(parents=True)
        (pkg / "__init__.py").write_text("")
        (pkg / "data" / f"part{n}.bin").write_bytes(part)
    monkeypatch.syspath_prepend(str(site))
    for n in range(1, 4):
        sys.modules.pop(f"fakepart{n}", None)
    return CatalogueModel(
        name="tiny",
        description="",
        gguf_name="tiny.gguf",
        chunks=tuple(Chunk(f"fakepart{n}", f"data/part{n}.bin") for n in range(1, 4)),
        size=len(blob),
        sha256=hashlib.sha256(blob).hexdigest(),
        languages=("en",),
        pip_packages=("fakepart1", "fakepart2", "fakepart3"),
    )
