from __future__ import annotations

from pathlib import Path

import pytest

from dragoman.cli import main
from dragoman.service.keys import hash_key


def test_keys_add_list_revoke(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "keys"
    assert main(["keys", "add", "alice", "--api-keys-file", str(path)]) == 0
    out = capsys.readouterr()
    key = out.out.strip()
    assert key.startswith("dm-")
    assert "shown this once" in out.err
    assert path.read_text() == f"{hash_key(key)} alice\n"
    assert main(["keys", "list", "--api-keys-file", str(path)]) == 0
    assert capsys.readouterr().out == f"alice\t{hash_key(key)[:12]}\n"
    assert main(["keys", "revoke", "alice", "--api-keys-file", str(path)]) == 0
    assert path.read_text() == ""
    assert main(["keys", "revoke", "alice", "--api-keys-file", str(path)]) == 1
    assert f"no key named 'alice' in {path}" in capsys.readouterr().err


def test_keys_need_the_file(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("DRAGOMAN_API_KEYS_FILE", raising=False)
    assert main(["keys", "add", "alice"]) == 2
    assert "api_keys_file" in capsys.readouterr().err
